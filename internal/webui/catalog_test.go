package webui_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

const (
	canaryRegistry = "CANARY-registry-web-4a7c-never-show"
	canaryClient   = "CANARY-client-web-9e03-never-show"
)

// TestBrowserCatalog drives the web page as a guide in Chromium
// (testdata/browser/catalog.cjs lists the steps), against a real daemon
// whose person has a Claude Code file, and a registry run by the test:
// the empty state, the catalog (search, a refused bundle), adding an npm
// server and a remote with a secret header from the registry through the
// add form, importing the Claude Code file, connecting Claude Code (the
// change shown, then written as shown), the failing server first, and the
// marks of a sandboxed, a switched-off and a needs-login server.
func TestBrowserCatalog(t *testing.T) {
	modules := browserModules(t)
	reg := registrytest.Start(t)
	remote := testenv.KeyedServer(t, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+canaryRegistry })
	reg.SetRemoteURL("io.github.github/github-mcp-server", remote)
	as := authserver.Start(t, authserver.Options{})

	e := testenv.New(t)
	person := filepath.Join(filepath.Dir(e.Home), "person")
	if err := os.MkdirAll(person, 0o700); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(person, ".claude.json")
	// A server that cannot start: imported, it fails, and is listed first.
	if err := os.WriteFile(claude, []byte(`{"mcpServers": {"broken": {"command": "/nonexistent/broken-mcp", "env": {"BROKEN_TOKEN": "`+canaryClient+`"}}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.NPMProject(t, filepath.Dir(e.Home))
	e.ExtraEnv = append(e.ExtraEnv, "HOME="+person, "XDG_CONFIG_HOME="+filepath.Join(person, ".config"), "CLAUDE_CONFIG_DIR=", "CODEX_HOME=",
		"PATH="+filepath.Dir(e.Bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	e.StartDaemon()
	e.MustRun("settings", "set", "registry.url", reg.URL)
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	events := followEvents(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "browser", "catalog.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "LOGIN_URL="+link, "OAUTH_URL="+as.MCPURL,
		"CANARY="+canaryRegistry, "CANARY_CLIENT="+canaryClient, "FAILSHOT="+t.TempDir())
	if *saveShots {
		cmd.Env = append(cmd.Env, "SHOTS="+filepath.Join(testenv.RepoRoot(), "docs", "screenshots"))
	}
	out, err := testenv.CombinedOutput(t, cmd)
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v", err)
	}

	// Connect wrote Plexus's entry, and kept the file before.
	b, err := os.ReadFile(claude)
	if err != nil || !strings.Contains(string(b), `"plexus"`) || !strings.Contains(string(b), e.Bin) {
		t.Errorf("Claude Code's file after connect: %v\n%s", err, b)
	}
	if backups, _ := filepath.Glob(claude + ".plexus-backup-*"); len(backups) != 1 {
		t.Errorf("backups: %v", backups)
	}
	stream := events()
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	for what, text := range map[string]string{"the event stream": stream, "the daemon's log": string(logs), "the daemon's output": e.DaemonOutput()} {
		for _, secret := range []string{canaryRegistry, canaryClient} {
			if strings.Contains(text, secret) {
				t.Errorf("a secret value appeared in %s", what)
			}
		}
	}
}
