package localapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
)

// useRegistry points the daemon at reg.
func useRegistry(t *testing.T, c *http.Client, reg *registrytest.Registry) {
	t.Helper()
	resp := do(t, c, "PUT", "/v1/settings", `{"registry":{"url":"`+reg.URL+`"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("settings: %d %+v", resp.StatusCode, decodeError(t, resp))
	}
	var s apitype.Settings
	json.NewDecoder(resp.Body).Decode(&s)
	if s.Registry == nil || s.Registry.URL != reg.URL {
		t.Fatalf("settings answer %+v", s.Registry)
	}
}

func getJSON(t *testing.T, c *http.Client, method, path, body string, out any) {
	t.Helper()
	resp := do(t, c, method, path, body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %+v", method, path, resp.StatusCode, decodeError(t, resp))
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryRoutes(t *testing.T) {
	reg := registrytest.Start(t)
	_, c := serve(t)
	var s apitype.Settings
	getJSON(t, c, "GET", "/v1/settings", "", &s)
	if s.Registry == nil || s.Registry.URL != "https://registry.modelcontextprotocol.io" {
		t.Errorf("the default registry: %+v", s.Registry)
	}
	useRegistry(t, c, reg)

	var list apitype.RegistryList
	getJSON(t, c, "GET", "/v1/registry/servers?search=memory", "", &list)
	if len(list.Servers) != 1 || list.Servers[0].Name != "io.github.modelcontextprotocol/server-memory" || list.Source.Registry != reg.URL {
		t.Fatalf("search memory: %+v", list)
	}
	if o := list.Servers[0].Options; len(o) != 1 || o[0].Kind != "npm" || !o[0].Runnable || o[0].Label != "@modelcontextprotocol/server-memory@2026.8.31" {
		t.Errorf("options %+v", o)
	}
	getJSON(t, c, "GET", "/v1/registry/servers?limit=2", "", &list)
	if len(list.Servers) != 2 || list.NextCursor == "" {
		t.Errorf("a page of 2: %d servers, cursor %q", len(list.Servers), list.NextCursor)
	}

	var show apitype.RegistryShow
	getJSON(t, c, "GET", "/v1/registry/servers/"+url.PathEscape("io.github.github/github-mcp-server")+"?version=0.20.2", "", &show)
	if show.Server.Version != "0.20.2" || !slices.Equal(show.Versions, []string{"0.24.0", "0.20.2"}) || len(show.Server.ServerJSON) == 0 {
		t.Errorf("show: %+v versions %v", show.Server.Name, show.Versions)
	}
	if o := show.Server.Options; len(o) != 1 || o[0].Runnable || !strings.Contains(o[0].Reason, "Plexus runs no containers") {
		t.Errorf("OCI option: %+v", o)
	}

	// A plan: secrets by name only, the optional one stored already is
	// referred to, and nothing is saved.
	const canary = "canary-registry-7d1f"
	if resp := do(t, c, "PUT", "/v1/secrets/NEO4J_CYPHER_NEO4J_PASSWORD", `{"value":"`+canary+`"}`); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	var before apitype.ServerList
	getJSON(t, c, "GET", "/v1/servers", "", &before)
	var plan apitype.RegistryPlan
	body := `{"name":"io.github.neo4j-contrib/mcp-neo4j-cypher","values":{"NEO4J_URI":["bolt://127.0.0.1:7687"]}}`
	resp := do(t, c, "POST", "/v1/registry/plan", body)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.Contains(string(raw), canary) {
		t.Fatalf("plan: %d %s", resp.StatusCode, raw)
	}
	json.Unmarshal(raw, &plan)
	if plan.Server != "neo4j-cypher" || !slices.Equal(plan.Missing, []string{"env:NEO4J_USERNAME"}) ||
		!strings.Contains(string(plan.Config), `"NEO4J_PASSWORD":{"env":"NEO4J_CYPHER_NEO4J_PASSWORD"}`) {
		t.Errorf("plan: %s", raw)
	}
	i := slices.IndexFunc(plan.Fields, func(f apitype.RegistryField) bool { return f.Key == "env:NEO4J_PASSWORD" })
	if i < 0 || !plan.Fields[i].Stored || !plan.Fields[i].Secret {
		t.Errorf("password field: %+v", plan.Fields)
	}
	var after apitype.ServerList
	getJSON(t, c, "GET", "/v1/servers", "", &after)
	if after.Revision != before.Revision || len(after.Servers) != 0 {
		t.Errorf("a plan saved something: revision %d → %d", before.Revision, after.Revision)
	}

	// A taken name: the next free one is suggested.
	if resp := do(t, c, "POST", "/v1/servers", `{"name":"memory","noVerify":true,"config":{"type":"stdio","command":"/nonexistent/x"}}`); resp.StatusCode != 201 {
		t.Fatalf("add: %d %+v", resp.StatusCode, decodeError(t, resp))
	}
	getJSON(t, c, "POST", "/v1/registry/plan", `{"name":"io.github.modelcontextprotocol/server-memory"}`, &plan)
	if plan.Server != "memory-2" || plan.NameTaken {
		t.Errorf("suggested %q taken %v", plan.Server, plan.NameTaken)
	}
}

func TestRegistryRouteErrors(t *testing.T) {
	reg := registrytest.Start(t)
	_, c := serve(t)
	useRegistry(t, c, reg)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v1/registry/servers/not-a-name", "", 400, "NAMESPACE/NAME"},
		{"GET", "/v1/registry/servers/" + url.PathEscape("io.example/none"), "", 404, "no such server"},
		{"GET", "/v1/registry/servers?limit=500", "", 400, "limit must be"},
		{"POST", "/v1/registry/plan", `{"name":"io.github.github/github-mcp-server","version":"0.20.2"}`, 400, "Plexus runs no containers"},
		{"POST", "/v1/registry/plan", `{"name":"io.github.motherduckdb/mcp-server-motherduck","values":{"--max-rows":["x"]}}`, 400, "must be a number"},
		{"POST", "/v1/registry/plan", `{"name":"io.github.github/github-mcp-server","version":"../../x"}`, 400, "a version is"},
		{"POST", "/v1/registry/plan", `{"name":"io.github.github/github-mcp-server","colour":1}`, 400, "unknown field"},
	} {
		resp := do(t, c, tc.method, tc.path, tc.body)
		e := decodeError(t, resp)
		if resp.StatusCode != tc.status || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %s: %d %+v, want %d …%s…", tc.method, tc.path, resp.StatusCode, e, tc.status, tc.want)
		}
	}
	// A registry that is down, fails or answers garbage: a clear error,
	// and the settings are as they were.
	var before apitype.Settings
	getJSON(t, c, "GET", "/v1/settings", "", &before)
	for mode, want := range map[registrytest.Mode]string{
		registrytest.Down:    "cannot be reached",
		registrytest.Failing: "answered HTTP 500: database unavailable",
		registrytest.Garbage: "not an MCP registry's answer",
	} {
		reg.SetMode(mode)
		resp := do(t, c, "GET", "/v1/registry/servers?search=neo4j", "")
		e := decodeError(t, resp)
		if resp.StatusCode < 500 || !strings.Contains(e.Message, want) || !strings.Contains(e.Hint, "registry.url") {
			t.Errorf("mode %d: %d %+v", mode, resp.StatusCode, e)
		}
		resp = do(t, c, "POST", "/v1/registry/plan", `{"name":"io.github.neo4j-contrib/mcp-neo4j-cypher"}`)
		if e := decodeError(t, resp); resp.StatusCode < 500 || !strings.Contains(e.Message, want) {
			t.Errorf("mode %d plan: %d %+v", mode, resp.StatusCode, e)
		}
	}
	var after apitype.Settings
	getJSON(t, c, "GET", "/v1/settings", "", &after)
	if after.Revision != before.Revision {
		t.Errorf("a failing registry changed the settings")
	}
	resp := do(t, c, "PUT", "/v1/settings", `{"registry":{"url":"http://registry.example.com"}}`)
	if e := decodeError(t, resp); resp.StatusCode != 400 || len(e.Problems) != 1 || e.Problems[0].Path != "mcp.registry.url" {
		t.Errorf("an http registry: %d %+v", resp.StatusCode, e)
	}
}
