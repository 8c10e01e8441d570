package localapi

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/store"
)

// importFile is a Claude-style file with literal secrets (all holding
// CANARY), a name to normalize and an entry Plexus cannot run. Its servers
// fail at once if started: nothing listens on port 1, no such command.
const importFile = `{
  "mcpServers": {
    "alpha": {"command": "/nonexistent/alpha-mcp", "args": ["--stdio"], "env": {"ALPHA_TOKEN": "CANARY-alpha-token"}},
    "beta": {"type": "http", "url": "http://127.0.0.1:1/mcp?api_key=CANARY-beta-key",
             "headers": {"Authorization": "Bearer CANARY-beta-bearer"}},
    "bad name!": {"command": "/nonexistent/other-mcp"},
    "socket": {"url": "ws://127.0.0.1:1/mcp"}
  }
}`

// serveImport runs the API over a real host and store, and returns them
// too, so that tests can look at what was saved.
func serveImport(t *testing.T) (*http.Client, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{Store: st})
	t.Cleanup(h.Close)
	sock := filepath.Join(dir, "api.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: apiHandler(h), ConnContext: ConnContext}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return unixClient(sock), st
}

// postImport sends an import and returns the status and the raw body,
// which it checks for the canaries.
func postImport(t *testing.T, c *http.Client, req apitype.ImportRequest) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(req)
	resp := do(t, c, "POST", "/v1/import", string(b))
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(body), "CANARY") {
		t.Fatalf("the answer reveals a secret value:\n%s", body)
	}
	return resp.StatusCode, body
}

func importOK(t *testing.T, c *http.Client, req apitype.ImportRequest) apitype.ImportResult {
	t.Helper()
	status, body := postImport(t, c, req)
	if status != http.StatusOK {
		t.Fatalf("import: %d %s", status, body)
	}
	var res apitype.ImportResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestImportDryRunThenTwice(t *testing.T) {
	c, st := serveImport(t)
	req := apitype.ImportRequest{Dialect: "claude", Source: "/home/me/.claude.json", Content: importFile, DryRun: true}

	dry := importOK(t, c, req)
	want := []string{"alpha", "bad-name", "beta"}
	if !slices.Equal(dry.Added, want) || !dry.DryRun || dry.Revision != 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	if !slices.Equal(dry.SecretsSet, []string{"ALPHA_TOKEN", "BETA_API_KEY", "BETA_BEARER_TOKEN"}) {
		t.Fatalf("dry run secrets: %v", dry.SecretsSet)
	}
	if len(st.Config().MCP.Servers) != 0 || len(st.Creds().Env) != 0 || st.Config().Revision != 0 {
		t.Fatal("the dry run changed the settings")
	}
	var skipped, renamed int
	for _, e := range dry.Entries {
		switch e.Action {
		case apitype.ImportSkipped:
			skipped++
			if e.Source != "mcpServers.socket" || !strings.Contains(e.Reason, "WebSocket") {
				t.Errorf("skipped: %+v", e)
			}
		case apitype.ImportRenamed:
			renamed++
			if e.Original != "bad name!" || e.Name != "bad-name" || e.Result != apitype.ImportAdded {
				t.Errorf("renamed: %+v", e)
			}
		}
	}
	if skipped != 1 || renamed != 1 {
		t.Fatalf("entries: %+v", dry.Entries)
	}

	req.DryRun = false
	first := importOK(t, c, req)
	if !slices.Equal(first.Added, want) || first.Revision != 1 || len(first.SecretsSet) != 3 {
		t.Fatalf("import: %+v", first)
	}
	credsRev := st.Creds().Revision
	if st.Creds().Env["BETA_API_KEY"] != "CANARY-beta-key" || st.Creds().Env["BETA_BEARER_TOKEN"] != "CANARY-beta-bearer" {
		t.Fatal("the secrets were not moved to the managed store")
	}
	if u := st.Config().MCP.Servers["beta"].URL; u != "http://127.0.0.1:1/mcp?api_key=${BETA_API_KEY}" {
		t.Fatalf("beta url: %s", u)
	}
	saved, err := os.ReadFile(filepath.Join(st.Home(), "extensions.json"))
	if err != nil || strings.Contains(string(saved), "CANARY") {
		t.Fatalf("extensions.json holds a secret value (%v):\n%s", err, saved)
	}

	// The same file again: nothing to do, no new revision.
	second := importOK(t, c, req)
	if len(second.Added) != 0 || !slices.Equal(second.Unchanged, want) || second.Revision != 1 ||
		len(second.SecretsSet) != 0 || len(second.SecretsKept) != 3 {
		t.Fatalf("second import: %+v", second)
	}
	if st.Config().Revision != 1 || st.Creds().Revision != credsRev {
		t.Fatalf("the second import saved: revision %d, secrets revision %d (was %d)", st.Config().Revision, st.Creds().Revision, credsRev)
	}
	for _, e := range second.Entries {
		if e.Action != apitype.ImportSkipped && e.Result != apitype.ImportUnchanged {
			t.Errorf("second import entry: %+v", e)
		}
	}
}

func TestImportConflictIsKept(t *testing.T) {
	c, st := serveImport(t)
	resp := do(t, c, "POST", "/v1/servers", `{"name":"alpha","config":{"type":"stdio","command":"/nonexistent/mine"},"noVerify":true}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("add alpha: %d", resp.StatusCode)
	}
	resp.Body.Close()
	res := importOK(t, c, apitype.ImportRequest{Dialect: "claude", Content: importFile})
	if !slices.Equal(res.Conflicts, []string{"alpha"}) || !slices.Equal(res.Added, []string{"bad-name", "beta"}) {
		t.Fatalf("import: %+v", res)
	}
	for _, e := range res.Entries {
		if e.Name == "alpha" && (e.Result != apitype.ImportConflict || len(e.Secrets) != 0) {
			t.Errorf("alpha: %+v", e)
		}
	}
	if got := st.Config().MCP.Servers["alpha"].Command; got != "/nonexistent/mine" {
		t.Fatalf("alpha was overwritten: %s", got)
	}
	if _, ok := st.Creds().Env["ALPHA_TOKEN"]; ok {
		t.Fatal("the conflicting server's secret was stored")
	}
	if slices.Contains(res.SecretsSet, "ALPHA_TOKEN") {
		t.Fatalf("secrets set: %v", res.SecretsSet)
	}
}

func TestImportRefusesToChangeASecret(t *testing.T) {
	c, st := serveImport(t)
	resp := do(t, c, "PUT", "/v1/secrets/ALPHA_TOKEN", `{"value":"another value"}`)
	resp.Body.Close()
	rev := st.Creds().Revision
	status, body := postImport(t, c, apitype.ImportRequest{Dialect: "claude", Content: importFile})
	if status != http.StatusConflict || !strings.Contains(string(body), "ALPHA_TOKEN") || !strings.Contains(string(body), "plexus secret rm ALPHA_TOKEN") {
		t.Fatalf("import: %d %s", status, body)
	}
	if len(st.Config().MCP.Servers) != 0 || st.Creds().Revision != rev || st.Creds().Env["ALPHA_TOKEN"] != "another value" {
		t.Fatal("a refused import changed the settings")
	}
}

func TestImportErrors(t *testing.T) {
	c, _ := serveImport(t)
	for _, tc := range []struct {
		req  apitype.ImportRequest
		want string
	}{
		{apitype.ImportRequest{Dialect: "claude", Content: "{\n  \"mcpServers\": {\n    \"x\": \"CANARY\" \"y\"\n}"}, "line 3"},
		{apitype.ImportRequest{Dialect: "codex", Content: "[mcp_servers.x]\ncommand = \"CANARY\nargs = 1\n"}, "codex: line 2"},
		{apitype.ImportRequest{Dialect: "claude", Content: `{"mcpServers": []}`}, "mcpServers (line 1): want an object"},
		{apitype.ImportRequest{Dialect: "cobol", Content: "{}"}, "unknown dialect"},
		{apitype.ImportRequest{Content: "what is this"}, "cannot tell which client"},
	} {
		status, body := postImport(t, c, tc.req)
		var e apitype.Error
		if status != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Err.Code != apitype.CodeBadRequest ||
			!strings.Contains(e.Err.Message, tc.want) {
			t.Errorf("%q: %d %s; want 400 with %q", tc.req.Content, status, body, tc.want)
		}
	}
	// The dialect is told from the file's name when not given.
	res := importOK(t, c, apitype.ImportRequest{Source: "/home/me/.cursor/mcp.json", Content: `{"mcpServers": {}}`, DryRun: true})
	if res.Dialect != "cursor" {
		t.Fatalf("dialect %q, want cursor", res.Dialect)
	}
}

func TestExportRoute(t *testing.T) {
	c, _ := serveImport(t)
	resp := do(t, c, "GET", "/v1/export?client=vscode", "")
	var s apitype.ExportResult
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("export: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if s.Path != ".vscode/mcp.json" || !strings.Contains(s.Text, `"servers"`) || !strings.Contains(s.Text, `"args": ["mcp"]`) {
		t.Fatalf("export: %+v", s)
	}
	resp = do(t, c, "GET", "/v1/export?client=emacs", "")
	if e := decodeError(t, resp); resp.StatusCode != 400 || !strings.Contains(e.Message, "unknown client") {
		t.Fatalf("unknown client: %d %+v", resp.StatusCode, e)
	}
}
