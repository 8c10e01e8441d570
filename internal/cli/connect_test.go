package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConnectAsksConsent: at a terminal, connecting asks before switching
// on external calls; "n" leaves them off and says how to switch them on
// later, "y" saves them on with the revision read. The client's file is
// written either way: connecting and sharing are separate choices.
func TestConnectAsksConsent(t *testing.T) {
	const settings = `{"revision":7,"callTimeoutMs":0,"retryMs":0,"face":{"allowExternalCall":false,"allowWrite":false},"profiles":{}}`
	f := startFake(t, map[string]reply{
		"GET /v1/settings": {200, settings},
		"PUT /v1/settings": {200, `{"revision":8,"callTimeoutMs":0,"retryMs":0,"face":{"allowExternalCall":true,"allowWrite":false},"profiles":{}}`},
	})
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	stdinInteractive = func(*app) bool { return true }
	t.Cleanup(func() { stdinInteractive = func(a *app) bool { return a.stdinIsTerminal() } })
	puts := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		n := 0
		for _, r := range f.reqs {
			if r.method == "PUT" {
				n++
			}
		}
		return n
	}

	r := run(t, "n\n", "connect", "codex", "--command", "plexus")
	if r.code != 0 || !strings.Contains(r.stderr, "Share your servers' tools") || !strings.Contains(r.stderr, "external calls stay off") || puts() != 0 {
		t.Fatalf("answered no: exit %d, stderr %q, %d PUTs", r.code, r.stderr, puts())
	}
	if b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml")); err != nil || !strings.Contains(string(b), "[mcp_servers.plexus]") {
		t.Fatalf("the file after connect: %q %v", b, err)
	}
	r = run(t, "y\n", "connect", "codex", "--command", "plexus")
	if r.code != 0 || puts() != 1 || !strings.Contains(r.stderr, "external calls are on") {
		t.Fatalf("answered yes: exit %d, stderr %q, %d PUTs", r.code, r.stderr, puts())
	}
	put := f.request(t, "PUT")
	if put.ifMatch != "7" || !sameJSON(t, put.body, `{"revision":7,"callTimeoutMs":0,"retryMs":0,"face":{"allowExternalCall":true,"allowWrite":false},"profiles":{}}`) {
		t.Errorf("sent If-Match %q, %s", put.ifMatch, put.body)
	}
}

// TestClientNamesComplete: the shell completes connect's, disconnect's and
// import's CLIENT.
func TestClientNamesComplete(t *testing.T) {
	for _, args := range [][]string{{"__complete", "connect", ""}, {"__complete", "disconnect", "cl"}, {"__complete", "import", ""}} {
		r := run(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "claude\n") || !strings.Contains(r.stdout, "codex\n") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stdout)
		}
	}
}

// TestGeminiTrustWarning: connecting Gemini CLI warns that it starts no
// MCP server in a folder not trusted, unless this one is.
func TestGeminiTrustWarning(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PLEXUS_HOME", shortTempDir(t))
	r := run(t, "", "connect", "gemini", "--command", "plexus")
	if r.code != 0 || !strings.Contains(r.stderr, "only in folders you trust") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	wd, _ := os.Getwd()
	if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+wd+`": "TRUST_FOLDER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "disconnect", "gemini"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, "", "connect", "gemini", "--command", "plexus"); r.code != 0 || strings.Contains(r.stderr, "trust") {
		t.Fatalf("a trusted folder: exit %d, stderr %q", r.code, r.stderr)
	}
}
