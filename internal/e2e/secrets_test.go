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

const canary = "CANARY-3f9a1c7e-never-print-me"

// startKeyedServer runs an MCP server on 127.0.0.1 that refuses every
// request without X-Api-Key: canary and the bearer token canary.
func startKeyedServer(t *testing.T) string {
	return testenv.KeyedServer(t, func(r *http.Request) bool {
		return r.Header.Get("X-Api-Key") == canary && r.Header.Get("Authorization") == "Bearer "+canary+"-bearer"
	})
}

// TestSecretsNeverLeak plants canary values with `plexus secret set`, uses
// them to reach a server that requires them, and searches every output —
// CLI stdout and stderr, --json, errors, the daemon's log and output, the
// settings file — for them.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	url := startKeyedServer(t)
	e := testenv.New(t)
	e.StartDaemon()

	var outputs []string
	run := func(stdin string, args ...string) testenv.Result {
		r := e.Run(stdin, args...)
		outputs = append(outputs, strings.Join(args, " ")+"\n"+r.Stdout+r.Stderr)
		return r
	}
	for name, val := range map[string]string{"KEYED_KEY": canary, "KEYED_BEARER": canary + "-bearer"} {
		if r := run(val+"\n", "secret", "set", name); r.Code != 0 {
			t.Fatalf("secret set %s: %+v", name, r)
		}
	}
	if r := run("", "add", "keyed", url+"?team=${KEYED_KEY}", "--header", "X-Api-Key=KEYED_KEY", "--bearer-env", "KEYED_BEARER"); r.Code != 0 {
		t.Fatalf("add keyed: %+v", r)
	}
	st := waitState(t, e, "keyed", "ready", 20*time.Second)
	if st.Tools != 1 {
		t.Fatalf("keyed: %+v", st)
	}
	whoami := toolNamed(t, tools(t, e), "keyed", "whoami")
	if r := run("", "call", whoami.Name); r.Code != 0 || !strings.Contains(r.Stdout, "authorized") {
		t.Fatalf("call whoami: %+v", r)
	}

	// Failures whose messages could carry the secret: a server that cannot
	// be reached at a URL with the secret in its query, a wrong key.
	if r := run("", "add", "unreachable", "http://127.0.0.1:1/mcp?key=${KEYED_KEY}", "--header", "X-Api-Key=KEYED_KEY"); r.Code == 0 {
		t.Fatal("adding an unreachable server succeeded")
	}
	if r := run("", "add", "wrongkey", url, "--header", "X-Api-Key=KEYED_BEARER"); r.Code == 0 {
		t.Fatal("adding a server with the wrong key succeeded")
	}
	for _, args := range [][]string{
		{"ls"}, {"ls", "--json"}, {"status"}, {"status", "--json"}, {"tools"}, {"tools", "--json"},
		{"tools", "--format", "openai"}, {"secret", "ls"}, {"secret", "ls", "--json"}, {"call", whoami.Name, "--json"},
	} {
		run("", args...)
	}

	noLeaks(t, e, outputs, canary)
	// The secret is where it belongs, and only there.
	b, _ := os.ReadFile(filepath.Join(e.Home, "creds.json"))
	if !strings.Contains(string(b), canary) {
		t.Error("creds.json does not hold the secret")
	}
}
