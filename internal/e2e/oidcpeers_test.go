package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The OAuth end-to-end tests' peers, from npm (oidcprovider/, pinned and
// installed with npm ci): oidc-provider in one of its configurations, the
// two MCP servers on the TypeScript SDK it protects (rs.mjs), and a
// person's headless Chromium (browser.cjs).

// oidcModules installs the peers' packages once and copies the scripts
// beside their node_modules, where their imports resolve; it returns that
// directory.
func oidcModules(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(), "internal", "e2e", "oidcprovider")
	dir := filepath.Dir(testenv.NPMInstall(t, src, "oidc-provider"))
	oidcScripts.Do(func() {
		for _, f := range []string{"provider.mjs", "rs.mjs", "browser.cjs"} {
			data, err := os.ReadFile(filepath.Join(src, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, f), data, 0o644)
			}
			if err != nil {
				oidcScriptsErr = err
				return
			}
		}
	})
	if oidcScriptsErr != nil {
		t.Fatal(oidcScriptsErr)
	}
	return dir
}

var (
	oidcScripts    sync.Once
	oidcScriptsErr error
)

// startNode runs `node script args...` in dir and waits for a stdout line
// starting with ready; it returns that line's rest.
func startNode(t *testing.T, dir, script string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s said:\n%s", script, stderr.String())
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "ready"); ok {
				ready <- strings.TrimSpace(rest)
			}
		}
	}()
	select {
	case s := <-ready:
		return s
	case <-time.After(45 * time.Second):
		t.Fatalf("%s did not start:\n%s", script, stderr.String())
	}
	return ""
}

// oidcPeers are one configuration's oidc-provider and the two MCP servers
// it protects.
type oidcPeers struct {
	config string
	issuer string
	rs     string // the resource servers' origin
	ttl    time.Duration
}

const oidcRSSecret = "CANARY-rs-introspection-secret-41c7"

// startOIDCPeers starts oidc-provider in config, with access tokens of
// ttl, and the TypeScript SDK's servers in front of it. A caCert (the
// PEM file of the CA of an https server on loopback) turns on client ID
// metadata documents, which oidc-provider fetches over https only.
func startOIDCPeers(t *testing.T, config string, ttl time.Duration, caCert string) *oidcPeers {
	t.Helper()
	dir := oidcModules(t)
	asPort, rsPort := testenv.FreePort(t), testenv.FreePort(t)
	p := &oidcPeers{config: config, rs: fmt.Sprintf("http://127.0.0.1:%d", rsPort), ttl: ttl}
	args := []string{config, strconv.Itoa(asPort), p.url("bearer") + "," + p.url("dpop"), strconv.Itoa(int(ttl.Seconds())), oidcRSSecret}
	var env []string
	if caCert != "" {
		args = append(args, "cimd")
		env = []string{"NODE_EXTRA_CA_CERTS=" + caCert}
	}
	p.issuer = startNode(t, dir, "provider.mjs", env, args...)
	mode := "jwt"
	if config == "revocation" {
		mode = "introspect"
	}
	startNode(t, dir, "rs.mjs", nil, strconv.Itoa(rsPort), p.issuer, oidcRSSecret, mode)
	return p
}

// url is the MCP endpoint of the server of kind: "bearer" takes bearer
// tokens only, "dpop" requires DPoP-bound ones.
func (p *oidcPeers) url(kind string) string { return p.rs + "/" + kind + "/mcp" }

// rsStats is what one resource server took (rs.mjs /stats).
type rsStats struct {
	Schemes  map[string]int `json:"schemes"`
	Accounts map[string]int `json:"accounts"`
	Expired  int            `json:"expired"`
	Refused  int            `json:"refused"`
	Calls    int            `json:"calls"`
}

func (p *oidcPeers) stats(t *testing.T) map[string]rsStats {
	t.Helper()
	resp, err := http.Get(p.rs + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]rsStats
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// revoke revokes a token at the provider (RFC 7009) with the client's
// credentials; for a refresh token oidc-provider revokes the whole grant.
func (p *oidcPeers) revoke(t *testing.T, clientID, secret, token string) {
	t.Helper()
	form := url.Values{"token": {token}, "token_type_hint": {"refresh_token"}}
	req, _ := http.NewRequest(http.MethodPost, p.issuer+"/token/revocation", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	} else {
		form.Set("client_id", clientID)
		req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revocation: HTTP %d", resp.StatusCode)
	}
}

// chromium drives headless Chromium (browser.cjs): one browser, its
// logins one at a time, each as a new person.
type chromium struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Scanner
}

// browserLogin is one login the browser made.
type browserLogin struct {
	OK    bool     `json:"ok"`
	URL   string   `json:"url"`
	Text  string   `json:"text"`
	Pages []string `json:"pages"`
	Error string   `json:"error"`
}

// startBrowser starts the browser for the test. Chromium is required in
// CI; elsewhere a test without it is skipped.
func startBrowser(t *testing.T) *chromium {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("no /usr/bin/chromium: apt-get install -y chromium to run the browser logins")
		}
		t.Fatal("the OAuth tests need /usr/bin/chromium in CI: apt-get install -y chromium")
	}
	cmd := exec.Command("node", "browser.cjs")
	cmd.Dir = oidcModules(t)
	// A folder of its own for Chromium's profiles: none may outlive the run.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the browser closes and exits
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the browser said:\n%s", stderr.String())
		}
	})
	b := &chromium{in: stdin, out: bufio.NewScanner(stdout)}
	b.out.Buffer(make([]byte, 1<<20), 1<<20)
	var hello browserLogin
	if !b.out.Scan() || json.Unmarshal(b.out.Bytes(), &hello) != nil || !hello.OK {
		t.Fatalf("the browser did not start: %q\n%s", b.out.Text(), stderr.String())
	}
	return b
}

// login opens authURL as user; paste says the browser is on another
// machine (the redirect does not reach the daemon: its address is
// returned to paste back).
func (b *chromium) login(t *testing.T, authURL, user string, paste bool) browserLogin {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"url": authURL, "user": user, "paste": paste})
	if _, err := fmt.Fprintf(b.in, "%s\n", line); err != nil {
		t.Fatalf("the browser: %v", err)
	}
	if !b.out.Scan() {
		t.Fatalf("the browser ended: %v", b.out.Err())
	}
	var r browserLogin
	if err := json.Unmarshal(b.out.Bytes(), &r); err != nil {
		t.Fatalf("the browser said %q", b.out.Text())
	}
	return r
}
