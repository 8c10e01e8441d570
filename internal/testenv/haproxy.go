package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// haproxyConfig is the balancer the team tests put in front of replicas,
// as a Kubernetes Service or an ingress would be: HTTP mode, one request at
// a time round robin over the backends (a client's kept-alive connection
// does not pin it to one backend), and timeouts long enough for an event
// stream that is quiet for minutes. A backend is checked as a Service's
// readiness probe checks a pod (GET /readyz, every 500 ms): one that is not
// ready, or refuses connections, is taken out within about a second, and
// one that starts gets requests once it is ready. A request whose
// connection a backend refused goes to another backend (redispatch); a
// request already sent is never sent again.
const haproxyConfig = `global
    maxconn 4096

defaults
    mode http
    option redispatch
    retries 2
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s
    timeout http-keep-alive 1m

frontend plexus
    bind 127.0.0.1:%d
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
%s`

// haproxyBin returns the path of Debian's haproxy, or "".
func haproxyBin() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	return ""
}

// StartHAProxy runs haproxy in front of backends (host:port, on loopback)
// on a free 127.0.0.1 port and returns it once it accepts connections. haproxy is a process the test owns (procs.go): it
// is killed when the test ends, or when the test binary dies. The test is
// skipped when haproxy is not installed (apt-get install haproxy; .ci/run
// installs it).
func StartHAProxy(t testing.TB, backends ...string) *HAProxy {
	t.Helper()
	if len(backends) == 0 {
		t.Fatal("StartHAProxy: no backends")
	}
	bin := haproxyBin()
	if bin == "" {
		t.Skip("haproxy is not installed: apt-get install haproxy; .ci/run installs it")
	}
	var servers strings.Builder
	for i, b := range backends {
		host, _, err := net.SplitHostPort(b)
		if err != nil {
			t.Fatalf("StartHAProxy: backend %q: %v", b, err)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("StartHAProxy: backend %q is not on loopback", b)
		}
		fmt.Fprintf(&servers, "    server r%d %s check inter 500ms fall 2 rise 1\n", i, b)
	}
	port := FreePort(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, haproxyConfig, port, servers.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// -db: stay in the foreground, so that the process is the one the test
	// owns; -f: only this configuration, not the system's.
	cmd := exec.Command(bin, "-db", "-f", cfg)
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := Start(t, cmd); err != nil {
		t.Fatalf("StartHAProxy: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return &HAProxy{Addr: addr, backends: backends, out: out}
		}
		select {
		case <-done:
			t.Fatalf("haproxy exited at start:\n%s", out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy not listening on %s after 10s:\n%s", addr, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HAProxy is a balancer a test runs (StartHAProxy).
type HAProxy struct {
	Addr     string // the host:port it listens on
	backends []string
	out      *SyncBuffer // what haproxy writes: its warnings
}

// WaitDown waits until the balancer's check has taken backend out, as a
// Service drops a dead pod's endpoint: haproxy's warning "Server
// replicas/rN is DOWN". Until then a request may still go to it, also on a
// connection the balancer opened before it died (a request already sent
// there is not sent again, so its client gets an error). It fails the test
// after 10 s.
func (h *HAProxy) WaitDown(t testing.TB, backend string) {
	t.Helper()
	i := slices.Index(h.backends, backend)
	if i < 0 {
		t.Fatalf("WaitDown: %s is not a backend of this balancer (%v)", backend, h.backends)
	}
	down := fmt.Sprintf("Server replicas/r%d is DOWN", i)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(h.out.String(), down) {
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not take %s out within 10 s; it said:\n%s", backend, h.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
