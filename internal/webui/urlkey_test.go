package webui_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestBrowserURLKey drives the web page in headless Chromium against a real
// daemon (testdata/browser/urlkey.cjs): a server added by a URL carrying
// ?api_key=… comes up, and the key never reaches the page — not in its
// text, its fields or any response — while the settings keep ${VAR}; a
// plain env value is edited as text and saved as a plain value; and a slow
// start shows the time waited and the server's latest stderr line.
func TestBrowserURLKey(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("no " + chromium + ": install Debian's chromium to run the browser test")
		}
		t.Fatalf("the browser test needs %s in CI", chromium)
	}
	const key = "CANARY-url-key-4e7f-web"
	root := testenv.RepoRoot()
	modules := testenv.NPMInstall(t, filepath.Join(root, "internal", "webui", "testdata", "browser"), "browser")
	remote := testenv.KeyedServer(t, func(r *http.Request) bool { return r.URL.Query().Get("api_key") == key })

	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"mcp": {"servers": {"plain": {"type": "stdio", "command": ` + strconv.Quote(e.Bin) +
		`, "args": ["example-server"], "env": {"DEBUG": {"value": "1"}}}}}}`
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "slow.sh")
	script := "#!/bin/sh\necho 'npm warn exec The following package was not found and will be installed' >&2\nsleep 4\nexec " + strconv.Quote(e.Bin) + " example-server\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	events := followEvents(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "browser", "urlkey.cjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "LOGIN_URL="+link, "HTTP_URL="+remote, "CANARY="+key, "SLOW_CMD="+slow)
	out, err := testenv.CombinedOutput(t, cmd)
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v", err)
	}
	stream := events()
	e.StopDaemon()
	ext, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ext), "?api_key=${KEYED_API_KEY}&team=blue") || !strings.Contains(string(ext), `"value": "2"`) {
		t.Errorf("extensions.json:\n%s", ext)
	}
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	for what, text := range map[string]string{"extensions.json": string(ext), "the event stream": stream, "the log": string(logs), "the daemon's output": e.DaemonOutput()} {
		if strings.Contains(text, key) {
			t.Errorf("the key appeared in %s", what)
		}
	}
}
