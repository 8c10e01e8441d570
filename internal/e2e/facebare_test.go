package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestBareProfileIsTransparent: a bare profile in front of a server that
// has only tools looks like that server — no prompts or resources
// advertised, none of Plexus's own tools, and a long description (2,781
// characters, as a real server's) whole.
func TestBareProfileIsTransparent(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	desc := filepath.Join(t.TempDir(), "desc")
	long := strings.Repeat("Searches the index for documents. ", 82)[:2781]
	if err := os.WriteFile(desc, []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("add", "fs", "--", testenv.FaultServer(t), "--echo-description-file", desc)
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true}, "profiles": {"fs": {"servers": ["fs"], "naming": "bare"}},`, 1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := os.ReadFile(filepath.Join(e.Home, "token"))
	cs := httpFace(t, "http://"+st.HTTPAddr+"/mcp/fs", strings.TrimSpace(string(tok)), nil)
	caps := cs.InitializeResult().Capabilities
	if caps.Prompts != nil || caps.Resources != nil {
		t.Errorf("a bare profile of a server with only tools advertises prompts %+v, resources %+v", caps.Prompts, caps.Resources)
	}
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Name == "echo" && tool.Description != long {
			t.Errorf("echo's description: %d characters, the server's has %d", len([]rune(tool.Description)), len(long))
		}
	}
	if strings.Join(names, ",") != "echo,work" && strings.Join(names, ",") != "work,echo" {
		t.Errorf("tools of the bare profile: %v, want the server's echo and work only", names)
	}
}
