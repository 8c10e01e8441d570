package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestResultCap: a 20 MiB result, over its server's maxResultBytes, is
// neither cut short nor handed over whole: the call answers with a
// resource_link to the result the daemon keeps, which the client reads in
// pages of at most the cap and puts back together — through the HTTP face
// (a session, its calls taking both paths) and through `plexus mcp`.
func TestResultCap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("moves 20 MiB a few times")
	}
	e := testenv.New(t)
	e.StartDaemon()
	const big = 20 << 20
	e.MustRun("add", "big", "--", testenv.FaultServer(t), "--huge-line", "20971520")
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true},`, 1))
	b = []byte(strings.Replace(string(b), `"big": {`, `"big": {"maxResultBytes": 2097152,`, 1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	work := toolNamed(t, tools(t, e), "big", "work").Name
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := os.ReadFile(filepath.Join(e.Home, "token"))
	faces := map[string]*mcp.ClientSession{
		"HTTP face":  httpFace(t, "http://"+st.HTTPAddr+"/mcp", strings.TrimSpace(string(tok)), nil),
		"plexus mcp": connectFace(t, e),
	}
	for name, cs := range faces {
		t.Run(name, func(t *testing.T) {
			for call := range 2 { // the first call of a session and a later one
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: work, Arguments: map[string]any{"text": "big"}})
				if err != nil {
					t.Fatal(err)
				}
				var link *mcp.ResourceLink
				for _, c := range res.Content {
					if l, ok := c.(*mcp.ResourceLink); ok {
						link = l
					}
				}
				if res.IsError || link == nil || !strings.HasPrefix(link.URI, "plexus://results/") {
					t.Fatalf("call %d: want a resource_link to the kept result, got %s", call, resultJSON(res))
				}
				var whole strings.Builder
				uri, pages := link.URI, 0
				for uri != "" {
					rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Fatalf("reading %s: %v", uri, err)
					}
					c := rr.Contents[0]
					if len(c.Text) > 2<<20 {
						t.Fatalf("page %s is %d bytes, over the cap", uri, len(c.Text))
					}
					whole.WriteString(c.Text)
					pages++
					uri, _ = c.Meta["plexus/next"].(string)
				}
				var out mcp.CallToolResult
				if err := json.Unmarshal([]byte(whole.String()), &out); err != nil {
					t.Fatalf("the %d pages do not make a result: %v", pages, err)
				}
				if got := textOfResult(t, &out, nil); len(got) != big || strings.Trim(got, "x") != "" {
					t.Fatalf("the kept result's text is %d bytes, the server's %d", len(got), big)
				}
				if pages < 10 {
					t.Errorf("%d pages of at most 2 MiB for a 20 MiB result", pages)
				}
			}
		})
	}
}

func resultJSON(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	if len(b) > 2000 {
		b = append(b[:2000], "…"...)
	}
	return string(b)
}
