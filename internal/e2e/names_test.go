package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

var toolNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestNamesOfRealServers: the names on the face of every real server's
// catalog the tests have — the six npm servers of the passthrough tests
// and Plexus's example server, twice (the same tools on two servers) —
// are all distinct and valid, each server_tool (the operations
// server__read_resource, server__get_prompt), and the same after a
// restart and on another home where the servers were first seen in
// another order (half of them, in reverse, then the rest one by one).
// Under -short (the race run): the example servers and server-everything.
func TestNamesOfRealServers(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	servers := append(passthroughServers(t),
		npmServer{"example", []string{e.Bin, "example-server"}}, npmServer{"example2", []string{e.Bin, "example-server"}})
	if testing.Short() {
		servers = slices.DeleteFunc(servers, func(s npmServer) bool { return !strings.HasPrefix(s.name, "example") && s.name != "everything" })
	}
	began := time.Now()
	first := namesHome(t, e, servers)
	face := faceNames(t, e)
	plain := map[string]int{}
	for _, tl := range tools(t, e) {
		if tl.Kind == "tool" {
			plain[tl.Server+"_"+tl.Tool]++
		}
	}
	seen := map[string]bool{}
	for key, name := range first {
		server, tool, _ := strings.Cut(key, "/")
		want := catalog.ReadableName(server, tool)
		if tool == catalog.KindReadResource || tool == catalog.KindGetPrompt {
			want = catalog.ReadableOpName(server, tool)
		} else if plain[want] > 1 {
			want = name // two tools want it: one is suffixed (pins' tests)
		}
		if name != want || !toolNameRule.MatchString(name) || seen[name] || !face[name] {
			t.Errorf("%s is %q (want %q, valid, unique, on the face: %v)", key, name, want, face[name])
		}
		seen[name] = true
	}
	t.Logf("%d names of %d servers (%s)", len(first), len(servers), time.Since(began).Round(time.Millisecond))

	e.StopDaemon()
	e.StartDaemon()
	// Stdio servers on demand: listed from their cached catalogs, under
	// the same names, before any of them runs again.
	for _, s := range servers {
		waitState(t, e, s.name, "idle", 120*time.Second)
	}
	sameNames(t, "after a restart", first, catalogNames(t, e))
	t.Logf("restarted (%s)", time.Since(began).Round(time.Millisecond))

	// Another home: the second half of the servers first, in reverse
	// order, then the rest.
	other := testenv.New(t)
	reversed := slices.Clone(servers)
	slices.Reverse(reversed)
	namesHome(t, other, reversed[:len(reversed)/2])
	for _, s := range reversed[len(reversed)/2:] {
		other.MustRun(append([]string{"add", s.name, "--"}, s.argv...)...)
		waitState(t, other, s.name, "ready", 120*time.Second)
	}
	sameNames(t, "on a home that saw the servers in another order", first, catalogNames(t, other))
	t.Logf("another home (%s)", time.Since(began).Round(time.Millisecond))
}

// namesHome starts a daemon on e with servers and returns the catalog's
// names once all are ready.
func namesHome(t *testing.T, e *testenv.Env, servers []npmServer) map[string]string {
	t.Helper()
	writeServers(t, e, servers)
	e.StartDaemon()
	for _, s := range servers {
		waitState(t, e, s.name, "ready", 120*time.Second)
	}
	return catalogNames(t, e)
}

func writeServers(t *testing.T, e *testenv.Env, servers []npmServer) {
	t.Helper()
	var srv []string
	for _, s := range servers {
		args, _ := json.Marshal(s.argv[1:])
		srv = append(srv, fmt.Sprintf(`%q: {"type": "stdio", "command": %s, "args": %s, "startupTimeoutMs": 120000}`, s.name, jsonString(s.argv[0]), args))
	}
	cfg := `{"mcp": {"face": {"allowExternalCall": true}, "servers": {` + strings.Join(srv, ",") + `}}}`
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// catalogNames maps server/tool to its name in the catalog.
func catalogNames(t *testing.T, e *testenv.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tl := range tools(t, e) {
		out[tl.Server+"/"+tl.Tool] = tl.Name
	}
	return out
}

// faceNames are the tools a client of the face lists.
func faceNames(t *testing.T, e *testenv.Env) map[string]bool {
	t.Helper()
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	cs := httpFace(t, "http://"+st.HTTPAddr+"/mcp", strings.TrimSpace(string(tok)), nil)
	out := map[string]bool{}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if out[tool.Name] {
			t.Errorf("the face lists %q twice", tool.Name)
		}
		out[tool.Name] = true
	}
	return out
}

func sameNames(t *testing.T, when string, want, got map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d names, %d before", when, len(got), len(want))
	}
	for key, name := range want {
		if got[key] != name {
			t.Errorf("%s: %s is %q, was %q", when, key, got[key], name)
		}
	}
}

// TestKilledDaemonLeavesNoServer: a daemon killed with SIGKILL cannot stop
// its servers, so the lifeline shim must end each server's whole process
// group — including a grandchild, as npx leaves.
func TestKilledDaemonLeavesNoServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", "sh", "-c", "sleep 1000 & exec "+e.Bin+" example-server")
	st := waitState(t, e, "example", "ready", 20*time.Second)
	e.KillDaemon()
	groupGone(t, st.PID, 10*time.Second)
}
