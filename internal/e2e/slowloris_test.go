//go:build linux

package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTricklingCallersDoNotStarveTheSocket: with no token at all, callers
// open hundreds of connections to the loopback address and to the socket,
// send a request's headers and then its body a byte a second, or nothing
// (T6 in docs/security.md). The daemon runs with a low limit on open files (256,
// as on a system that sets one), so that hundreds are enough to exhaust
// it. Meanwhile the CLI, over the socket, answers `status`, `restart` and
// `secret set` within a bound, a client with the token is served on the
// loopback address, a scraper of --metrics-listen's address (which takes
// no token, so all its callers stay unproven) is served, and the daemon's
// open files stay under its limit.
func TestTricklingCallersDoNotStarveTheSocket(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	// A soft limit below the hard one: the daemon raises it (Go's runtime
	// does, at start, to one below the hard limit) and sizes its
	// listeners by it.
	e.DaemonWrap = []string{"sh", "-c", `ulimit -Sn 64 && ulimit -Hn 256 && exec "$0" "$@"`}
	metricsAddr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	e.DaemonArgs = []string{"--metrics-listen", metricsAddr}
	e.StartDaemon()
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(e.DaemonPID()) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`Max open files\s+25[56]\s+256\s`).Match(limits) {
		t.Fatalf("the daemon's open files are not raised to the hard limit:\n%s", limits)
	}
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(e.Home, "plexus.sock")

	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	open := func(network, addr, first string) {
		c, err := net.DialTimeout(network, addr, 2*time.Second)
		if err != nil {
			return // refused outright: fine
		}
		c.Write([]byte(first))
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	post := func(host string) string {
		return "POST /v1/servers HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
	}
	for range 300 {
		open("tcp", st.HTTPAddr, post("127.0.0.1"))
	}
	for range 150 {
		open("tcp", st.HTTPAddr, "")
	}
	for range 100 {
		open("unix", sock, post("plexus"))
	}
	for range 300 {
		open("tcp", metricsAddr, post("127.0.0.1"))
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { // a byte a second on every connection
		for ctx.Err() == nil {
			mu.Lock()
			for _, c := range conns {
				c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				c.Write([]byte(" "))
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()

	bound := 5 * time.Second
	if testenv.Race() {
		bound = 10 * time.Second // race-built CLI and daemon, beside the race run's others
	}
	for _, args := range [][]string{{"status"}, {"restart", "example"}, {"secret", "set", "TRICKLE_OK"}} {
		cctx, cancel := context.WithTimeout(t.Context(), 4*bound)
		cmd := exec.CommandContext(cctx, e.Bin, args...)
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		cmd.Stdin = strings.NewReader("v\n")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		cancel()
		if err != nil || took > bound {
			t.Errorf("plexus %s under the flood: %v after %s, want an answer within %s\n%s", strings.Join(args, " "), err, took.Round(time.Millisecond), bound, out)
		}
	}

	// A client with the token on the loopback address.
	tok, _ := os.ReadFile(filepath.Join(e.Home, "token"))
	req, _ := http.NewRequest("GET", "http://"+st.HTTPAddr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	hc := &http.Client{Timeout: 2 * bound}
	start := time.Now()
	if resp, err := hc.Do(req); err != nil || resp.StatusCode != 200 || time.Since(start) > bound {
		t.Errorf("GET /metrics with the token under the flood: %v %v after %s", resp, err, time.Since(start))
	} else {
		resp.Body.Close()
	}

	// A scraper of the metrics address, which takes no token.
	start = time.Now()
	if resp, err := hc.Get("http://" + metricsAddr + "/metrics"); err != nil || resp.StatusCode != 200 || time.Since(start) > bound {
		t.Errorf("GET /metrics on --metrics-listen under the flood: %v %v after %s", resp, err, time.Since(start))
	} else {
		resp.Body.Close()
	}

	fds, err := os.ReadDir("/proc/" + strconv.Itoa(e.DaemonPID()) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	if len(fds) >= 256 {
		t.Errorf("the daemon holds %d open files, its limit", len(fds))
	}
	t.Logf("under the flood the daemon held %d open files of 256", len(fds))
}
