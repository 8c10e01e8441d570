package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultLinksBelongToTheirSession: a client handed a link to a kept
// result of its own (so that its profile offers the results' template)
// tries the link another session's call was answered with — a session of
// the same profile, a stateless (MCP 2026-07-28) client of it, clients of
// another profile, and `plexus mcp` — and gets what a link to nothing
// gets: the result is read only by the session whose call made it.
// (Stateless clients have no session: those of one profile, and in team
// mode of one member, share one, as they share everything else.)
func TestResultLinksBelongToTheirSession(t *testing.T) {
	t.Parallel()
	e, base, tok := faceEnv(t, `"a": {"servers": ["example"]}, "b": {"servers": ["example"]}`)
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), `"example": {`, `"example": {"maxResultBytes": 4096,`, 1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	const sessionEra = "2025-11-25"
	owner := httpFaceEra(t, base+"/mcp/a", tok, sessionEra)
	others := map[string]*mcp.ClientSession{
		"another session of the profile":    httpFaceEra(t, base+"/mcp/a", tok, sessionEra),
		"a stateless client of the profile": httpFace(t, base+"/mcp/a", tok, nil),
		"a session of another profile":      httpFaceEra(t, base+"/mcp/b", tok, sessionEra),
		"a stateless client of another":     httpFace(t, base+"/mcp/b", tok, nil),
		"plexus mcp":                        connectFace(t, e),
	}
	secret := "KEPT-RESULT-CANARY-" + strings.Repeat("s", 20000)
	uri := bigEcho(t, owner, secret)
	rr, err := owner.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "KEPT-RESULT-CANARY-") {
		t.Fatalf("the owner reading its result: %v", err)
	}
	id := strings.TrimPrefix(uri[:strings.LastIndex(uri, "/")], "plexus://results/")
	never := strings.Repeat("0", len(id))
	defer func() {
		if logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl")); strings.Contains(string(logs), "KEPT-RESULT-CANARY-") {
			t.Error("the log holds a kept result's content")
		}
	}()
	for who, cs := range others {
		t.Run(who, func(t *testing.T) {
			own := bigEcho(t, cs, "mine "+strings.Repeat("m", 20000))
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: own}); err != nil {
				t.Fatalf("reading its own result: %v", err)
			}
			for _, page := range []string{"1", "2"} {
				rr, got := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "plexus://results/" + id + "/" + page})
				if got == nil {
					t.Fatalf("read page %s of another session's result: %.80s", page, rr.Contents[0].Text)
				}
				_, want := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "plexus://results/" + never + "/" + page})
				if want == nil || strings.ReplaceAll(got.Error(), id, never) != want.Error() {
					t.Fatalf("page %s: %q is not what a link to nothing gets (%v)", page, got, want)
				}
			}
		})
	}
}

// httpFaceEra connects an SDK client to the face at url, asking for
// protocol version (and checking it got it).
func httpFaceEra(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("negotiated %s, want %s", v, version)
	}
	return cs
}

// bigEcho calls the example server's echo with text, over its 4 KiB cap,
// and returns the link the call answered with.
func bigEcho(t *testing.T, cs *mcp.ClientSession, text string) string {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, tl := range list.Tools {
		if strings.HasSuffix(tl.Name, "echo") || strings.Contains(tl.Name, "_echo_") {
			name = tl.Name
		}
	}
	if name == "" {
		t.Fatalf("no echo among %d tools", len(list.Tools))
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && strings.HasPrefix(l.URI, "plexus://results/") {
			return l.URI
		}
	}
	t.Fatalf("the call was not answered with a link to a kept result: %s", resultJSON(res))
	return ""
}
