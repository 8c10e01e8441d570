package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestQuickstart follows the README: start the daemon on a fresh home, add
// the built-in example server, list and call its tools, read its resource,
// get its prompt, remove it — and its whole process group is gone.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()

	if m := mode(t, e.Home); m != 0o700 {
		t.Errorf("home mode %v, want 0700", m)
	}
	for _, f := range []string{"creds.json", "plexus.sock"} {
		if m := mode(t, filepath.Join(e.Home, f)); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, m)
		}
	}

	// The example server behind a shell that leaves a grandchild in the
	// group, as npx does: removing the server must end it too.
	e.MustRun("add", "example", "--", "sh", "-c", "sleep 1000 & exec "+e.Bin+" example-server")
	st := waitState(t, e, "example", "ready", 30*time.Second)
	if st.Tools != 6 || st.Type != "stdio" || !st.Enabled || st.PID == 0 {
		t.Fatalf("status after add: %+v", st)
	}

	list := tools(t, e)
	echo := toolNamed(t, list, "example", "echo")
	if echo.Name != "example_echo" || echo.Description == "" || len(echo.InputSchema) == 0 {
		t.Fatalf("echo entry: %+v", echo)
	}
	out := e.MustRun("call", echo.Name, `{"text":"hello, plexus"}`)
	if strings.TrimSpace(out) != "hello, plexus" {
		t.Fatalf("call echo printed %q", out)
	}
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	out = e.MustRun("call", "--json", echo.Name, `{"text":"x"}`)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "x" {
		t.Fatalf("call --json: %v %+v\n%s", err, res, out)
	}

	out = e.MustRun("resources", "--json")
	mustContain(t, "resources", out, "plexus://example/readme")
	out = e.MustRun("resources", "read", "example", "plexus://example/readme")
	mustContain(t, "resources read", out, "example")
	out = e.MustRun("prompts", "--json")
	mustContain(t, "prompts", out, "summarize")
	out = e.MustRun("prompts", "get", "example", "summarize", "text=the quick brown fox")
	mustContain(t, "prompts get", out, "the quick brown fox")

	// The per-server operations are catalog entries too.
	rr := toolNamed(t, list, "example", "read_resource")
	out = e.MustRun("call", rr.Name, `{"uri":"plexus://example/readme"}`)
	mustContain(t, "read_resource op", out, "example")

	e.MustRun("rm", "example")
	groupGone(t, st.PID, 10*time.Second)
	if _, ok := servers(t, e)["example"]; ok {
		t.Fatal("example still listed after rm")
	}
}
