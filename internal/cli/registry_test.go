package cli

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestAddFromRegistryAsks: at a terminal, a required value the person did
// not --set is asked for, then the secrets (required, and the optional
// one offered); the add sends the plan's settings with the secrets by
// their managed variables, and the plan the optional secret's key.
func TestAddFromRegistryAsks(t *testing.T) {
	stdinInteractive = func(*app) bool { return true }
	t.Cleanup(func() { stdinInteractive = func(a *app) bool { return a.stdinIsTerminal() } })
	var plans []apitype.RegistryPlanRequest
	plan := func(w http.ResponseWriter, r *http.Request) {
		var req apitype.RegistryPlanRequest
		json.NewDecoder(r.Body).Decode(&req)
		plans = append(plans, req)
		p := apitype.RegistryPlan{Name: req.Name, Version: "1.0.0", Server: "graph", Option: apitype.RegistryOption{Index: 1, Kind: "pypi"},
			Config:  json.RawMessage(`{"type":"stdio","command":"uvx","args":["graph==1.0.0"],"env":{"PASSWORD":{"env":"GRAPH_PASSWORD"}}}`),
			Missing: []string{}, Notes: []string{},
			Fields: []apitype.RegistryField{
				{Key: "env:URI", Label: "URI", Required: true, Description: "where the database is"},
				{Key: "env:PASSWORD", Label: "PASSWORD", Required: true, Secret: true, Var: "GRAPH_PASSWORD"},
				{Key: "env:TOKEN", Label: "TOKEN", Secret: true, Var: "GRAPH_TOKEN"},
			}}
		if len(req.Values["env:URI"]) == 0 {
			p.Missing = []string{"env:URI"}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p)
	}
	f := startFakeStreams(t, map[string]reply{
		"POST /v1/servers": {201, `{"revision":2,"server":{"name":"graph","state":"ready","type":"stdio","enabled":true,"tools":3}}`},
	}, map[string]http.HandlerFunc{"POST /v1/registry/plan": plan})
	r := run(t, "bolt://db:7687\ncanary-password\ncanary-token\n", "add", "--from-registry", "io.example/graph", "--no-verify")
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"URI (where the database is): ", "Value of PASSWORD", "Value of TOKEN, optional: enter to skip"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "canary") {
		t.Errorf("a secret was printed:\n%s%s", r.stdout, r.stderr)
	}
	if len(plans) != 3 || !slices.Equal(plans[1].Values["env:URI"], []string{"bolt://db:7687"}) || !slices.Equal(plans[2].Secrets, []string{"env:TOKEN"}) {
		t.Errorf("plans: %+v", plans)
	}
	var put apitype.PutServerRequest
	json.Unmarshal([]byte(f.bodyOf(t, "POST /v1/servers")), &put)
	if put.Name != "graph" || !put.NoVerify || put.Secrets["GRAPH_PASSWORD"] != "canary-password" || put.Secrets["GRAPH_TOKEN"] != "canary-token" {
		t.Errorf("add: %+v", put)
	}
}

func TestRunsColumn(t *testing.T) {
	s := apitype.RegistryServer{Options: []apitype.RegistryOption{{Kind: "npm", Runnable: true}, {Kind: "npm"}, {Kind: "oci"}, {Kind: "remote", Runnable: true}}}
	if got := runsColumn(s); got != "npm,remote (not oci)" {
		t.Errorf("runs %q", got)
	}
	if got := runsColumn(apitype.RegistryServer{Options: []apitype.RegistryOption{{Kind: "oci"}}}); got != "- (not oci)" {
		t.Errorf("runs %q", got)
	}
}
