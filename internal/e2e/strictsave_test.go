package e2e

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestStrictSaves: a server that cannot start is refused with the cause
// named, and extensions.json and creds.json are byte-identical to before
// (R-API-2).
func TestStrictSaves(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	broken := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	})}
	go broken.Serve(ln)
	t.Cleanup(func() { broken.Close() })

	e := testenv.New(t)
	e.StartDaemon()
	if r := e.Run("s3cr3t\n", "secret", "set", "KEEP"); r.Code != 0 {
		t.Fatal(r)
	}
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	files := func() [2][]byte {
		a, _ := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
		b, _ := os.ReadFile(filepath.Join(e.Home, "creds.json"))
		return [2][]byte{a, b}
	}
	before := files()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no such command", []string{"add", "nocmd", "--", "/nonexistent/mcp-server"}, []string{"/nonexistent/mcp-server"}},
		{"HTTP 500", []string{"add", "web", "http://" + ln.Addr().String() + "/mcp"}, []string{"500"}},
		// The timeout bounds the spawn too: 3 s leaves the shell time to
		// write its line on a loaded machine before it is killed.
		{"handshake timeout", []string{"add", "slow", "--startup-timeout", "3000", "--", "sh", "-c", "echo waiting >&2; sleep 60"}, []string{"startup timeout (3s)", "waiting"}},
		{"exits at once", []string{"add", "dies", "--", "sh", "-c", "echo missing API key >&2; exit 1"}, []string{"missing API key", "exit"}},
		{"edit to a broken command", []string{"edit", "example", "--command", "/nonexistent/other"}, []string{"/nonexistent/other"}},
	} {
		r := e.Run("", tc.args...)
		if r.Code == 0 {
			t.Errorf("%s: saved", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("%s: the error does not name %q:\n%s", tc.name, w, r.Stderr)
			}
		}
		if after := files(); !bytes.Equal(after[0], before[0]) || !bytes.Equal(after[1], before[1]) {
			t.Fatalf("%s changed the files", tc.name)
		}
	}
	// The running server was never touched.
	echo := toolNamed(t, tools(t, e), "example", "echo")
	if out := e.MustRun("call", echo.Name, `{"text":"still here"}`); strings.TrimSpace(out) != "still here" {
		t.Fatalf("call after refused edits: %q", out)
	}
}
