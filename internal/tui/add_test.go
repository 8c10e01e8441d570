package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddHTTP: n opens the form on http, the name is suggested from the
// URL's host, the bearer token and one header are typed masked, and ctrl+s
// saves the server with its credentials: references in extensions.json,
// values in creds.json, and the server really receives them (R-UI-2).
func TestAddHTTP(t *testing.T) {
	const token, apiKey = "canary-bearer-7f3a9c", "canary-header-51d2e8"
	srv := startHTTPServer(t, token, false)
	e := startDaemon(t)
	u := startUI(t, e)
	u.waitText("No servers yet")

	u.press("n")
	u.waitText("new server", "[http]")
	u.press(srv.URL)
	u.waitText("local", "(suggested)") // 127.0.0.1
	u.press("tab", "tab", token, "tab", "X-Api-Key", "tab", apiKey)
	u.waitText("header value  " + strings.Repeat("•", len(apiKey)))
	u.press("ctrl+s")
	s := u.waitText("added local (ready, 1 tool)")
	if !strings.Contains(s, "● ready") || strings.Contains(s, "new server") {
		t.Fatalf("after saving:\n%s\n%s", s, u.daemonSide())
	}
	u.waitText("tools     ping")

	ext, creds := files(t, e.Home)
	for _, want := range []string{`"bearerTokenEnvVar": "LOCAL_TOKEN"`, `"X-Api-Key"`, `"LOCAL_X_API_KEY"`, srv.URL} {
		if !strings.Contains(ext, want) {
			t.Errorf("extensions.json lacks %s:\n%s", want, ext)
		}
	}
	if strings.Contains(ext, token) || strings.Contains(ext, apiKey) {
		t.Fatalf("a secret is in extensions.json:\n%s", ext)
	}
	if !strings.Contains(creds, token) || !strings.Contains(creds, apiKey) {
		t.Fatal("creds.json lacks the secrets typed into the form")
	}
	if !srv.saw("Bearer "+token, apiKey) {
		t.Fatal("the server never received the token and the header typed into the form")
	}
	u.noCanary(token, apiKey)
}

// TestAddStdioQuotedPath: ← → switches to stdio, the command is written as
// in a shell with a quoted path holding a space, and an env entry is typed
// masked; the saved argv is exact and the value is in creds.json only.
func TestAddStdioQuotedPath(t *testing.T) {
	const envSecret = "canary-env-0c77b1"
	e := startDaemon(t)
	// The command's line on the detail screen fits 80 columns only if
	// the path is short: not t.TempDir(), whose name is the test's.
	parent, err := os.MkdirTemp("", "q")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	dir := filepath.Join(parent, "my bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "plexus")
	if err := os.Symlink(e.Bin, bin); err != nil {
		t.Fatal(err)
	}
	u := startUI(t, e)
	u.press("n")
	u.waitText("[http]")
	u.press("right")
	u.waitText("[stdio]", "command")
	u.press(`"` + bin + `" example-server`)
	u.waitText("plexus", "(suggested)")
	u.press("tab")
	u.press("enter") // enter on the name field moves on: nothing is saved yet
	u.press("EXAMPLE_TOKEN=" + envSecret)
	u.waitText("sets EXAMPLE_TOKEN")
	if ext, _ := files(t, e.Home); strings.Contains(ext, "plexus") {
		t.Fatal("something was written before the form was saved")
	}
	u.press("ctrl+s")
	u.waitText("added plexus (ready, ")

	ext, creds := files(t, e.Home)
	for _, want := range []string{`"command": "` + bin + `"`, `"example-server"`, `"EXAMPLE_TOKEN": {`, `"env": "PLEXUS_EXAMPLE_TOKEN"`} {
		if !strings.Contains(ext, want) {
			t.Errorf("extensions.json lacks %s:\n%s", want, ext)
		}
	}
	if strings.Contains(ext, envSecret) || !strings.Contains(creds, envSecret) {
		t.Fatalf("the env value is not where it belongs:\n%s", ext)
	}
	u.press("down")
	u.waitText(`command   '` + bin + `' example-`) // quoted back, wrapped at 80
	u.noCanary(envSecret)
}

// TestNameSuggestion: the name follows the URL or the command until the
// person edits it, then stays theirs.
func TestNameSuggestion(t *testing.T) {
	u := startUI(t, startDaemon(t))
	u.press("n", "https://mcp.example.com/mcp")
	u.waitText("name          example", "(suggested)")
	u.press("up", "up", "left") // to the transport row
	u.waitText("[stdio]")
	u.press(`npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`)
	u.waitText("name          filesystem", "(suggested)")
	u.press("tab", "2")
	u.waitScreen("the edited name", func(s string) bool {
		return strings.Contains(s, "filesystem2") && !strings.Contains(s, "(suggested)")
	})
	u.press("up", " --read-only") // back on the command
	u.waitText("/srv/my docs\" --read-only", "filesystem2")
	u.press("up", "right") // the transport row: back to http, the name stays
	u.waitText("[http]", "filesystem2")
	if strings.Contains(u.screen(), "(suggested)") {
		t.Fatalf("the suggestion came back after the name was edited:\n%s", u.screen())
	}
	u.press("esc")
	u.waitText("nothing changed")
}
