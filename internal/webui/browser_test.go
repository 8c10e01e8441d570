package webui_test

import (
	"bytes"
	"context"
	"crypto"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

const (
	chromium  = "/usr/bin/chromium"
	canary    = "CANARY-7d41e0b2-web-never-show-me"
	canaryEnv = "CANARY-ENV-52c9a8f3-web-never-show-me"
	// canaryOAuth is the client secret of the OAuth server's client.
	canaryOAuth = "CANARY-OAUTH-c1e5-web-never-show-me"
)

var saveShots = flag.Bool("screenshots", false, "save the browser test's screenshots under docs/screenshots")

// TestBrowser drives the web page in headless Chromium against a real
// daemon (the built binary on a temporary home) with the built-in example
// server and a keyed HTTP server: testdata/browser/ui.cjs lists the steps.
// It saves the screenshots under docs/screenshots with -screenshots
// (they change with every run: ports, times), else in a temporary
// directory.
func TestBrowser(t *testing.T) {
	modules := browserModules(t)
	root := testenv.RepoRoot()
	remote := startKeyedServer(t)
	key, keyPEM := testenv.ClientKey(t)
	// An authorization server of machine clients: one with a client
	// secret, one that signs private_key_jwt assertions with key.
	as := authserver.Start(t, authserver.Options{NoDCR: true, ClientCredentials: true,
		Clients: map[string]string{"plexus-web": canaryOAuth}, ClientKeys: map[string]crypto.PublicKey{"plexus-web-key": key.Public()}})

	e := testenv.New(t)
	// The stdio server's variable is also in the daemon's environment, so
	// that removing the stored one ("-") still lets it start.
	e.ExtraEnv = append(e.ExtraEnv, "EXAMPLE_KEY=from-the-daemon-environment",
		"PATH="+filepath.Dir(e.Bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	e.StartDaemon()
	token, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	link := strings.TrimSpace(e.MustRun("ui", "--no-browser"))
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.Contains(link, "/login?code=") {
		t.Fatalf("plexus ui printed %q", link)
	}
	events := followEvents(t, e)

	shots := t.TempDir()
	if *saveShots {
		shots = filepath.Join(root, "docs", "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	gate := filepath.Join(t.TempDir(), "go-on")
	steps := t.TempDir()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "browser", "ui.cjs"))
	cmd.Env = append(os.Environ(),
		"NODE_PATH="+modules,
		"LOGIN_URL="+link,
		"HTTP_URL="+remote,
		"CANARY="+canary,
		"CANARY_ENV="+canaryEnv,
		"OAUTH_URL="+as.MCPURL,
		"CANARY_OAUTH="+canaryOAuth,
		"KEY_PEM="+keyPEM,
		"TOKEN="+strings.TrimSpace(string(token)),
		"SETTINGS_FILE="+filepath.Join(e.Home, "extensions.json"),
		"SHOTS="+shots,
		"SLOW="+slowServer(t, e.Bin, steps),
		"STEPS="+steps,
		"GATED="+gatedServer(t, e.Bin, gate),
		"GATE="+gate,
		"PLEXUS_BIN="+e.Bin,
		"PLEXUS_HOME="+e.Home,
		"FAILSHOT="+t.TempDir(),
	)
	out, err := testenv.CombinedOutput(t, cmd)
	t.Logf("browser:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v", err)
	}

	stream := events()
	if !strings.Contains(stream, "event: server") {
		t.Errorf("the event stream carried no server events:\n%.2000s", stream)
	}
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	for what, text := range map[string]string{"the event stream": stream, "the daemon's log": string(logs), "the daemon's output": e.DaemonOutput()} {
		for _, secret := range []string{canary, canaryEnv, canaryOAuth, pemBody(keyPEM)} {
			if strings.Contains(text, secret) {
				t.Errorf("a secret value appeared in %s", what)
			}
		}
	}
}

// slowServer writes a stdio server that writes two stderr lines before it
// runs the example server, as a first `npx -y` writes while it downloads,
// and returns its path. Each line is followed by a step the browser script
// lets go on (the file steps/1, then steps/2) once the page has shown it:
// a line shown for a fixed time could come and go between two looks of a
// loaded machine's browser.
func slowServer(t *testing.T, bin, steps string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "slow.sh")
	wait := func(n string) string {
		return "while [ ! -e '" + filepath.Join(steps, n) + "' ]; do sleep 0.05; done\n"
	}
	body := "#!/bin/sh\necho 'fetching the package: 1 of 2' >&2\n" + wait("1") +
		"echo 'fetching the package: 2 of 2' >&2\n" + wait("2") + "exec '" + bin + "' example-server\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// gatedServer writes a stdio server that writes a stderr line and waits
// for the file gate before it runs the example server, and returns its
// path: its start lasts until the test says.
func gatedServer(t *testing.T, bin, gate string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "gated.sh")
	body := "#!/bin/sh\necho 'fetching the added package' >&2\nwhile [ ! -e '" + gate + "' ]; do sleep 0.05; done\nexec '" + bin + "' example-server\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// browserModules skips (outside CI) or fails the test if Chromium or Node.js
// is missing, and returns the browser scripts' node_modules.
func browserModules(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("no " + chromium + ": install Debian's chromium (apt-get install -y chromium) to run the browser test")
		}
		t.Fatalf("the browser test needs %s in CI: apt-get install -y chromium", chromium)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("the browser test needs Node.js (≥ 20)")
	}
	return testenv.NPMInstall(t, filepath.Join(testenv.RepoRoot(), "internal", "webui", "testdata", "browser"), "browser")
}

// followEvents logs in with a login link of its own and reads the page's
// event stream until the returned function is called, which returns all
// that was read.
func followEvents(t *testing.T, e *testenv.Env) func() string {
	t.Helper()
	base, cookie, token := e.WebLoginToken()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/events?page_token="+token, nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("events: %v %v", err, resp)
	}
	var mu sync.Mutex
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	stop := func() string {
		cancel()
		resp.Body.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// pemBody is the first line of a PEM's base64: what a leaked key shows.
func pemBody(p string) string {
	return strings.Split(p, "\n")[1]
}

// startKeyedServer runs an MCP server on 127.0.0.1 that refuses every
// request without X-Api-Key: canary.
func startKeyedServer(t *testing.T) string {
	return testenv.KeyedServer(t, func(r *http.Request) bool { return r.Header.Get("X-Api-Key") == canary })
}
