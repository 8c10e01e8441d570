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

const clientCanary = "CANARY-client-file-5e21"

// serveClients runs the API with the person's home at a temporary folder
// holding a Claude Code file with a server and a pasted secret, and the
// daemon's program at /usr/local/bin/plexus.
func serveClients(t *testing.T) (*http.Client, string) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "person")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	claude := `{"mcpServers": {"gh": {"command": "/nonexistent/gh-mcp", "env": {"GITHUB_TOKEN": "` + clientCanary + `"}}}}` + "\n"
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "plexus-home"))
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{Store: st})
	t.Cleanup(h.Close)
	api := apiHandler(h)
	api.executable = func() (string, error) { return "/usr/local/bin/plexus", nil }
	sock := filepath.Join(dir, "api.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api, ConnContext: ConnContext}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return unixClient(sock), home
}

func TestClientsListImportConnect(t *testing.T) {
	c, home := serveClients(t)
	var list apitype.ClientList
	getJSON(t, c, "GET", "/v1/clients", "", &list)
	i := slices.IndexFunc(list.Clients, func(f apitype.ClientFile) bool { return f.Client == "claude" })
	if !list.Available || i < 0 {
		t.Fatalf("clients: %+v", list)
	}
	claude := list.Clients[i]
	if !claude.Exists || claude.Connected || !slices.Equal(claude.Servers, []string{"gh"}) || claude.Path != filepath.Join(home, ".claude.json") {
		t.Errorf("claude: %+v", claude)
	}

	// Import: the daemon reads the file; the pasted secret becomes a
	// managed secret, never shown.
	resp := do(t, c, "POST", "/v1/clients/claude/import", `{}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.Contains(string(b), clientCanary) {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	var imp apitype.ImportResult
	json.Unmarshal(b, &imp)
	if !slices.Equal(imp.Added, []string{"gh"}) || len(imp.SecretsSet) != 1 {
		t.Errorf("import: %s", b)
	}

	// Connect: first the change (masked), then the write of exactly it.
	var dry apitype.ClientConnectResult
	getJSON(t, c, "POST", "/v1/clients/claude/connect", `{"dryRun":true}`, &dry)
	if !dry.Changed || dry.Base == "" || strings.Contains(dry.Diff, clientCanary) || !strings.Contains(dry.Diff, `"args":["mcp","--listen","off"]`) {
		t.Fatalf("dry run: %+v", dry)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude.json")); strings.Contains(string(b), "plexus") {
		t.Fatal("a dry run wrote the file")
	}
	resp = do(t, c, "POST", "/v1/clients/claude/connect", `{"base":"0000"}`)
	if e := decodeError(t, resp); resp.StatusCode != 409 || !strings.Contains(e.Message, "changed since its change was shown") {
		t.Errorf("a stale base: %d %+v", resp.StatusCode, e)
	}
	var done apitype.ClientConnectResult
	getJSON(t, c, "POST", "/v1/clients/claude/connect", `{"base":"`+dry.Base+`"}`, &done)
	if !done.Written || done.Backup == "" || done.AllowExternalCall {
		t.Fatalf("connect: %+v", done)
	}
	if fi, err := os.Stat(done.Backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup %s: %v %v", done.Backup, fi, err)
	}
	b, _ = os.ReadFile(filepath.Join(home, ".claude.json"))
	if !strings.Contains(string(b), `"plexus"`) || !strings.Contains(string(b), clientCanary) {
		t.Errorf("after connect the file is:\n%s", b)
	}
	getJSON(t, c, "GET", "/v1/clients", "", &list)
	if !list.Clients[i].Connected {
		t.Errorf("claude not connected after connect: %+v", list.Clients[i])
	}
	var again apitype.ClientConnectResult
	getJSON(t, c, "POST", "/v1/clients/claude/connect", `{}`, &again)
	if again.Changed || again.Written || again.Diff != "" {
		t.Errorf("connecting again: %+v", again)
	}
}

// TestClientsNoEscape: a client's file that is a link leading out of the
// home is neither read for import nor written by connect.
func TestClientsNoEscape(t *testing.T) {
	c, home := serveClients(t)
	outside := filepath.Join(filepath.Dir(home), "elsewhere.json")
	os.WriteFile(outside, []byte(`{"mcpServers":{}}`), 0o600)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	if err := os.Symlink(outside, filepath.Join(home, ".cursor", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	var list apitype.ClientList
	getJSON(t, c, "GET", "/v1/clients", "", &list)
	i := slices.IndexFunc(list.Clients, func(f apitype.ClientFile) bool { return f.Client == "cursor" })
	if i < 0 || !strings.Contains(list.Clients[i].Error, "outside your home") {
		t.Errorf("cursor: %+v", list.Clients)
	}
	for _, path := range []string{"/v1/clients/cursor/connect", "/v1/clients/cursor/import"} {
		resp := do(t, c, "POST", path, `{}`)
		if e := decodeError(t, resp); resp.StatusCode != 400 || !strings.Contains(e.Message, "outside your home") {
			t.Errorf("%s: %d %+v", path, resp.StatusCode, e)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"mcpServers":{}}` {
		t.Errorf("the file outside was written: %s", b)
	}
	resp := do(t, c, "POST", "/v1/clients/nosuch/connect", `{}`)
	if resp.StatusCode != 404 {
		t.Errorf("an unknown client: %d", resp.StatusCode)
	}
}
