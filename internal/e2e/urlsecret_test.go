package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

const urlCanary = "CANARY-5b1e-url-query-key"

// TestAddURLWithKey adds a server whose URL carries ?api_key=… through the
// real binary and daemon. The server (real HTTP on 127.0.0.1, answering
// only with the key) comes up, so the key reaches it; but the settings hold
// ${KEYED_API_KEY}, the key is a managed secret, and no output of the CLI
// (add, ls, tools, edit) nor the settings file shows it.
func TestAddURLWithKey(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	url := testenv.KeyedServer(t, func(r *http.Request) bool { return r.URL.Query().Get("api_key") == urlCanary })

	var outputs []string
	run := func(args ...string) testenv.Result {
		t.Helper()
		r := e.Run("", args...)
		outputs = append(outputs, args[0]+"\n"+r.Stdout+r.Stderr) // the output, not the command line
		if r.Code != 0 {
			t.Fatalf("plexus %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return r
	}
	r := e.Run("", "add", "keyed", url+"?api_key="+urlCanary+"&team=blue")
	if r.Code != 0 {
		t.Fatalf("add: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	mustContain(t, "add", r.Stderr, "stored as the managed secret KEYED_API_KEY")
	if strings.Contains(r.Stdout+r.Stderr, urlCanary) {
		t.Fatalf("add printed the key:\n%s%s", r.Stdout, r.Stderr)
	}
	waitState(t, e, "keyed", "ready", 30*time.Second)
	if names := strings.Fields(run("secret", "ls").Stdout); len(names) != 1 || names[0] != "KEYED_API_KEY" {
		t.Errorf("secret ls: %v", names)
	}
	run("ls")
	run("ls", "--json")
	run("tools", "--server", "keyed")

	// An edit that gives a new URL with a key moves that one too.
	run("edit", "keyed", "--url", url+"?token="+urlCanary+"-2", "--no-verify")

	e.StopDaemon()
	settings, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "extensions.json", string(settings), "?token=${KEYED_TOKEN}")
	outputs = append(outputs, "extensions.json\n"+string(settings), "daemon\n"+e.DaemonOutput())
	if logs, err := os.ReadFile(filepath.Join(e.Home, "logs.jsonl")); err == nil {
		outputs = append(outputs, "logs.jsonl\n"+string(logs))
	}
	for _, o := range outputs {
		if strings.Contains(o, urlCanary) {
			t.Errorf("the key leaked in:\n%s", o)
		}
	}
}
