package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestRegistrySearchShowAdd drives search, show and add --from-registry
// against a registry run by the test (real entries of the official one):
// an npm server that really starts, a PyPI one (uvx is not here: the
// translation and the start's failure), a remote one whose secret
// header a test server checks, an OCI image (refused); then the registry
// goes down and answers garbage. Canary secrets never show.
func TestRegistrySearchShowAdd(t *testing.T) {
	t.Parallel()
	const (
		pypiCanary   = "CANARY-neo4j-0c41-never-print"
		remoteCanary = "CANARY-github-pat-9b2e-never-print"
	)
	reg := registrytest.Start(t)
	keyed := testenv.KeyedServer(t, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+remoteCanary })
	reg.SetRemoteURL("io.github.github/github-mcp-server", keyed)
	e := testenv.New(t)
	testenv.NPMProject(t, filepath.Dir(e.Home))
	e.StartDaemon()
	var outputs []string
	run := func(stdin string, args ...string) testenv.Result {
		t.Helper()
		r := e.Run(stdin, args...)
		outputs = append(outputs, strings.Join(args, " ")+"\n"+r.Stdout+r.Stderr)
		return r
	}
	ok := func(args ...string) testenv.Result {
		t.Helper()
		r := run("", args...)
		if r.Code != 0 {
			t.Fatalf("plexus %s: %+v", strings.Join(args, " "), r)
		}
		return r
	}
	fails := func(want string, args ...string) testenv.Result {
		t.Helper()
		r := run("", args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, want) {
			t.Fatalf("plexus %s: exit %d, want a failure saying %q:\n%s%s", strings.Join(args, " "), r.Code, want, r.Stdout, r.Stderr)
		}
		return r
	}
	ok("settings", "set", "registry.url", reg.URL)

	// Search and show.
	r := ok("search", "memory")
	mustContain(t, "search memory", r.Stdout, "io.github.modelcontextprotocol/server-memory  2026.8.31  npm")
	r = ok("search", "--limit", "3")
	mustContain(t, "a first page", r.Stderr, "more: plexus search --cursor ")
	r = ok("search", "github-mcp", "--json")
	var list apitype.RegistryList
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list.Servers) != 1 || list.Servers[0].Options[0].Kind != "remote" {
		t.Fatalf("search github-mcp --json: %v %s", err, r.Stdout)
	}
	r = ok("show", "io.github.github/github-mcp-server")
	for _, want := range []string{"versions 0.24.0, 0.20.2", "* 1  remote http://127.0.0.1:", "header:Authorization (required, secret, kept in GITHUB_TOKEN)"} {
		mustContain(t, "show github", r.Stdout, want)
	}
	r = ok("show", "io.github.github/github-mcp-server@0.20.2")
	mustContain(t, "show github@0.20.2", r.Stdout, "cannot: Plexus runs no containers")

	// npm: added, started, its tools listed.
	r = ok("add", "--from-registry", "io.github.modelcontextprotocol/server-memory")
	mustContain(t, "add memory", r.Stdout, "added memory (ready")
	mustContain(t, "add memory", r.Stderr, "npx -y @modelcontextprotocol/server-memory@2026.8.31")
	toolNamed(t, tools(t, e), "memory", "read_graph")

	// OCI: refused, with the reason; nothing saved.
	fails("Plexus runs no containers", "add", "--from-registry", "io.github.github/github-mcp-server@0.20.2")

	// PyPI: a required value and a secret. Without them, the error says
	// how to give them; with them, the start fails (no uvx here) and says
	// why. Nothing is saved either way.
	fails("--set env:NEO4J_URI=VALUE --set env:NEO4J_USERNAME=VALUE", "add", "--from-registry", "io.github.neo4j-contrib/mcp-neo4j-cypher")
	pypi := []string{"add", "--from-registry", "io.github.neo4j-contrib/mcp-neo4j-cypher", "graph", "--set", "NEO4J_URI=bolt://127.0.0.1:1", "--set", "NEO4J_USERNAME=neo4j"}
	fails("plexus secret set GRAPH_NEO4J_PASSWORD", pypi...)
	if r := run(pypiCanary+"\n", "secret", "set", "GRAPH_NEO4J_PASSWORD"); r.Code != 0 {
		t.Fatal(r)
	}
	r = run("", pypi...)
	mustContain(t, "add the PyPI server", r.Stderr, "uvx mcp-neo4j-cypher==0.5.1")
	if _, err := os.Stat("/usr/bin/uvx"); err != nil && r.Code != 0 {
		// uvx is not installed: the start fails, naming the command.
		mustContain(t, "add the PyPI server", r.Stderr, `"uvx"`)
		mustContain(t, "add the PyPI server", r.Stderr, "nothing was saved")
	}
	if _, there := servers(t, e)["graph"]; there && r.Code != 0 {
		t.Error("a PyPI server that could not start was saved")
	}

	// A remote whose secret header the server checks: first without the
	// secret, then with a wrong one, then with the right one.
	fails("plexus secret set GITHUB_TOKEN", "add", "--from-registry", "io.github.github/github-mcp-server")
	if r := run("wrong-token\n", "secret", "set", "GITHUB_TOKEN"); r.Code != 0 {
		t.Fatal(r)
	}
	fails("401", "add", "--from-registry", "io.github.github/github-mcp-server")
	if r := run(remoteCanary+"\n", "secret", "set", "GITHUB_TOKEN"); r.Code != 0 {
		t.Fatal(r)
	}
	r = ok("add", "--from-registry", "io.github.github/github-mcp-server")
	mustContain(t, "add github", r.Stdout, "added github (ready")
	toolNamed(t, tools(t, e), "github", "whoami")

	// The registry goes down: a cached search says it is offline and
	// shows the last answer; an uncached one fails clearly. Then it
	// answers garbage: a clear error, and nothing changes.
	before := ok("ls", "--json").Stdout
	reg.SetMode(registrytest.Down)
	r = ok("search", "memory")
	mustContain(t, "a cached search", r.Stderr, "the registry's answer of ")
	r = ok("search", "memory", "--refresh")
	mustContain(t, "an offline search", r.Stderr, "offline: the registry at "+reg.URL+" cannot be reached")
	mustContain(t, "an offline search", r.Stdout, "io.github.modelcontextprotocol/server-memory")
	fails("cannot be reached", "search", "duck")
	reg.SetMode(registrytest.Garbage)
	fails("not an MCP registry's answer", "search", "duck", "--refresh")
	fails("not an MCP registry's answer", "add", "--from-registry", "io.github.motherduckdb/mcp-server-motherduck", "duck")
	if after := ok("ls", "--json").Stdout; after != before {
		t.Errorf("a failing registry changed the servers:\n%s\n%s", before, after)
	}
	ok("status", "--json")

	noLeaks(t, e, outputs, pypiCanary, remoteCanary)
}
