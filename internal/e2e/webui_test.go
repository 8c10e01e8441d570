package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// pageClient is a browser-like client of the daemon's web page: it logs in
// through `plexus ui --no-browser` and sends what the page sends.
type pageClient struct {
	t      *testing.T
	base   string
	cookie *http.Cookie
	token  string // the page token, sent as the page sends it
}

func loginPage(t *testing.T, e *testenv.Env) *pageClient {
	t.Helper()
	base, cookie, token := e.WebLoginToken()
	return &pageClient{t: t, base: base, cookie: cookie, token: token}
}

func (p *pageClient) do(method, path, body string, hdr map[string]string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", p.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if p.cookie != nil {
		req.AddCookie(p.cookie)
	}
	if p.token != "" {
		req.Header.Set("X-Plexus-Page-Token", p.token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestWebPageOnTheDaemon runs the page's guard and API on a real daemon:
// the loopback address is split between the token guard (/metrics, /mcp)
// and the page; a session opens the page's API and nothing else; the
// global settings round-trip strictly; and a planted secret is in no
// answer of any route the page reads.
func TestWebPageOnTheDaemon(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	if r := e.Run(canary+"\n", "secret", "set", "EX_TOKEN"); r.Code != 0 {
		t.Fatalf("secret set: %+v", r)
	}
	e.MustRun("add", "example", "--env", "TOKEN=EX_TOKEN", "--", e.Bin, "example-server")
	waitState(t, e, "example", "ready", 20*time.Second)
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	p := loginPage(t, e)

	// The split: the session opens no token route, the token no page route.
	for _, path := range []string{"/metrics", "/mcp", "/mcp/default"} {
		if code, _, _ := p.do("GET", path, "", nil); code != http.StatusUnauthorized {
			t.Errorf("%s with the session: %d, want 401", path, code)
		}
	}
	if code, _, _ := p.do("GET", "/metrics", "", map[string]string{"Authorization": "Bearer " + token}); code != 200 {
		t.Errorf("/metrics with the token: %d", code)
	}
	bare := &pageClient{t: t, base: p.base}
	if code, _, _ := bare.do("GET", "/api/v1/status", "", map[string]string{"Authorization": "Bearer " + token}); code != http.StatusUnauthorized {
		t.Errorf("the page's API with the token instead of a session: %d, want 401", code)
	}
	// A login link is minted over the socket only.
	if code, _, _ := p.do("POST", "/api/v1/ui/login", "{}", nil); code != http.StatusNotFound {
		t.Errorf("POST /api/v1/ui/login through the page: %d, want 404", code)
	}
	// Cross-site and simple content types never reach the daemon's API.
	if code, _, _ := p.do("DELETE", "/api/v1/servers/example", "{}", map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("cross-site DELETE: %d", code)
	}
	if code, _, _ := p.do("DELETE", "/api/v1/servers/example", "{}", map[string]string{"Content-Type": "text/plain"}); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain DELETE: %d", code)
	}
	waitState(t, e, "example", "ready", 5*time.Second)

	// Global settings: read, write with If-Match, stale and invalid writes refused.
	code, hdr, body := p.do("GET", "/api/v1/settings", "", nil)
	var s apitype.Settings
	if code != 200 || json.Unmarshal([]byte(body), &s) != nil || hdr.Get("ETag") == "" {
		t.Fatalf("GET settings: %d %s", code, body)
	}
	code, _, body = p.do("PUT", "/api/v1/settings", `{"callTimeoutMs":1234,"retryMs":0}`, map[string]string{"If-Match": hdr.Get("ETag")})
	if code != 200 || !strings.Contains(body, `"callTimeoutMs":1234`) {
		t.Fatalf("PUT settings: %d %s", code, body)
	}
	if code, _, body := p.do("PUT", "/api/v1/settings", `{"callTimeoutMs":1,"retryMs":0}`, map[string]string{"If-Match": hdr.Get("ETag")}); code != http.StatusConflict {
		t.Errorf("stale PUT settings: %d %s", code, body)
	}
	if code, _, body := p.do("PUT", "/api/v1/settings", `{"callTimeoutMs":-5,"retryMs":0}`, nil); code != http.StatusBadRequest || !strings.Contains(body, "mcp.callTimeoutMs") {
		t.Errorf("invalid PUT settings: %d %s", code, body)
	}
	if code, _, body := p.do("PUT", "/api/v1/settings", `{"callTimeout":5}`, nil); code != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s", code, body)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	mustContain(t, "extensions.json", string(cfg), `"callTimeoutMs": 1234`)

	// No answer of the page carries the secret or the token.
	for _, path := range []string{"/", "/app.js", "/app.css", "/api/v1/status", "/api/v1/servers", "/api/v1/servers/example",
		"/api/v1/servers/example/logs", "/api/v1/secrets", "/api/v1/settings", "/api/v1/tools"} {
		code, hdr, body := p.do("GET", path, "", nil)
		if code != 200 {
			t.Errorf("GET %s: %d", path, code)
		}
		if strings.Contains(body, canary) || strings.Contains(body, token) {
			t.Errorf("GET %s: a secret in the answer", path)
		}
		if !strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'") || hdr.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", path, hdr)
		}
	}
}
