//go:build unix

package connlimit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The child mode of this test binary: serve HTTP on a unix socket with a
// reserve, under a low limit of open files, all of which are then taken.
const envReserveSock = "PLEXUS_TEST_RESERVE_SOCK"

func TestMain(m *testing.M) {
	if sock := os.Getenv(envReserveSock); sock != "" {
		os.Exit(serveExhausted(sock, os.Getenv("PLEXUS_TEST_RESERVE") == "1"))
	}
	os.Exit(m.Run())
}

func serveExhausted(sock string, reserve bool) int {
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Println("setrlimit:", err)
		return 2
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Println("listen:", err)
		return 2
	}
	lim := Default(16)
	if reserve {
		lim.Reserve = 4
	}
	l := New(ln, "socket", lim, slog.New(slog.DiscardHandler))
	srv := l.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "answered") }), nil, nil)
	go srv.Serve(l)
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break // every file descriptor is taken
		}
		held = append(held, f)
	}
	fmt.Println("exhausted", len(held))
	select {}
}

// TestReserveAcceptsWhenFilesRunOut: a server out of file descriptors
// (something else took them all) still answers on a listener with a
// reserve; without one, it does not.
func TestReserveAcceptsWhenFilesRunOut(t *testing.T) {
	t.Parallel()
	for _, reserve := range []bool{true, false} {
		t.Run(fmt.Sprint("reserve=", reserve), func(t *testing.T) {
			t.Parallel()
			dir, err := os.MkdirTemp("", "pxr")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			sock := filepath.Join(dir, "s")
			exe, _ := os.Executable()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), envReserveSock+"="+sock, "PLEXUS_TEST_RESERVE="+map[bool]string{true: "1", false: "0"}[reserve])
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() })
			line, _ := bufio.NewReader(out).ReadString('\n')
			if !strings.HasPrefix(line, "exhausted") {
				t.Fatalf("the server: %q", line)
			}
			hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "unix", sock)
				}}}
			for i := range 3 { // each on a connection of its own
				resp, err := hc.Get("http://x/")
				answered := err == nil
				if answered {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					answered = string(b) == "answered"
				}
				if answered != reserve {
					t.Fatalf("request %d: answered %v (%v), want %v", i, answered, err, reserve)
				}
				if !reserve {
					break
				}
			}
		})
	}
}
