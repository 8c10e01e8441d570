package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestBadConfigFile: a daemon does not start on a settings file it would
// misread; it names the problem and leaves the file as it was.
func TestBadConfigFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"malformed", `{"mcp": {"servers": {"a": {"type": "stdio",, }}}}`, []string{"extensions.json", "line 1"}},
		{"unknown key", `{"mcp": {"servers": {"a": {"type": "stdio", "command": "x", "colour": "red"}}}}`, []string{"mcp.servers.a.colour"}},
		{"every problem at once", `{"mcp": {"retryMs": "soon", "servers": {"bad name": {"type": "stdio", "command": "x"}, "web": {"type": "http", "url": "https://u:p@example.com/mcp"}}}}`,
			[]string{"mcp.retryMs", "bad name", "mcp.servers.web.url"}},
		{"trailing data", `{"mcp": {}} {"mcp": {}}`, []string{"trailing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testenv.New(t)
			if err := os.MkdirAll(e.Home, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(e.Home, "extensions.json")
			if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			r := e.Run("", "daemon")
			if r.Code == 0 {
				t.Fatal("daemon started on a bad settings file")
			}
			for _, w := range tc.want {
				mustContain(t, "daemon error", r.Stderr, w)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.file {
				t.Fatalf("settings file changed:\n%s", b)
			}
		})
	}
}

// TestBadEditsChangeNothing: edits that are invalid are refused with an
// error naming the key or the variable, and extensions.json is unchanged.
func TestBadEditsChangeNothing(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	p := filepath.Join(e.Home, "extensions.json")
	before, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "bad name!", "--", e.Bin, "example-server"}, "bad name!"},
		{[]string{"add", "web", "https://user:pass@example.com/mcp"}, "userinfo"},
		{[]string{"add", "frag", "https://example.com/mcp#x"}, "fragment"},
		{[]string{"add", "web", "http://127.0.0.1:1/mcp", "--bearer-env", "PLEXUS_TEST_MISSING_VAR"}, "PLEXUS_TEST_MISSING_VAR"},
		{[]string{"add", "web", "http://127.0.0.1:1/mcp", "--header", "X-Key=PLEXUS_TEST_MISSING_HDR"}, "PLEXUS_TEST_MISSING_HDR"},
		{[]string{"add", "example", "--", e.Bin, "example-server"}, "already exists"},
		{[]string{"add", "nope", "--", "/nonexistent/server-binary"}, "/nonexistent/server-binary"},
		{[]string{"add", "nocmd", "--", "plexus-no-such-command-xyz"}, "plexus-no-such-command-xyz"},
		{[]string{"call", "example_echo", "not json"}, "JSON"},
		{[]string{"edit", "missing", "--cwd", "/"}, "missing"},
	} {
		r := e.Run("", tc.args...)
		if r.Code == 0 {
			t.Errorf("plexus %s: exit 0, want an error", strings.Join(tc.args, " "))
			continue
		}
		if !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("plexus %s: stderr does not name %q:\n%s", strings.Join(tc.args, " "), tc.want, r.Stderr)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Fatalf("plexus %s changed extensions.json:\n%s", strings.Join(tc.args, " "), after)
		}
	}
	// The daemon is not running: the error says how to start it.
	e.StopDaemon()
	r := e.Run("", "ls")
	if r.Code == 0 || !strings.Contains(r.Stderr, "plexus daemon") {
		t.Fatalf("ls without a daemon: %+v", r)
	}
}
