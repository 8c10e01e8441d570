package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testPage serves the page on 127.0.0.1 over real HTTP, with an API that
// records whether a request reached it and answers like the event stream
// does (no-cache, flushed).
type testPage struct {
	*Server
	srv     *httptest.Server
	reached atomic.Int32
	path    atomic.Value
	tokens  sync.Map // session cookie value → its page token, which do sends along
}

func newTestPage(t *testing.T, opts Options) *testPage {
	t.Helper()
	p := &testPage{}
	opts.API = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.reached.Add(1)
		p.path.Store(r.URL.Path)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
		w.(http.Flusher).Flush()
	})
	p.Server = New(opts)
	p.srv = httptest.NewServer(p.Server)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testPage) addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

// session logs in through a fresh login link and returns the cookie.
func (p *testPage) session(t *testing.T) *http.Cookie {
	t.Helper()
	link, _, err := p.LoginLink(p.addr())
	if err != nil {
		t.Fatal(err)
	}
	resp := p.do(t, "GET", link, nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	token, ok := strings.CutPrefix(resp.Header.Get("Location"), "/#"+pageTokenParam+"=")
	if !ok || len(token) != 64 {
		t.Fatalf("login redirected to %q, want the page with its token in the fragment", resp.Header.Get("Location"))
	}
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			p.tokens.Store(c.Value, token)
			return c
		}
	}
	t.Fatal("login set no session cookie")
	return nil
}

func (p *testPage) do(t *testing.T, method, u string, hdr map[string]string, cookie *http.Cookie) *http.Response {
	t.Helper()
	if !strings.HasPrefix(u, "http") {
		u = p.srv.URL + u
	}
	var body io.Reader
	if method != "GET" && method != "HEAD" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
		if tok, ok := p.tokens.Load(cookie.Value); ok && req.Header.Get(pageTokenHeader) == "" {
			req.Header.Set(pageTokenHeader, tok.(string))
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// routes lists every route of the page with a method that uses it.
var routes = []struct{ method, path string }{
	{"GET", "/"}, {"GET", "/app.js"}, {"GET", "/app.css"},
	{"GET", "/login?code=x"}, {"POST", "/logout"},
	{"GET", "/api/v1/status"}, {"GET", "/api/v1/events"}, {"POST", "/api/v1/servers"},
	{"PUT", "/api/v1/servers/x"}, {"DELETE", "/api/v1/servers/x"}, {"PUT", "/api/v1/settings"},
	{"GET", "/nothing-here"},
}

func checkHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: CSP %q lacks %q", what, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: CSP allows inline script: %q", what, csp)
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %s = %q, want %q", what, h, got, want)
		}
	}
}

func TestEveryRouteCarriesTheSecurityHeaders(t *testing.T) {
	p := newTestPage(t, Options{})
	c := p.session(t)
	json := map[string]string{"Content-Type": "application/json"}
	for _, r := range routes {
		for _, cookie := range []*http.Cookie{nil, c} {
			resp := p.do(t, r.method, r.path, json, cookie)
			checkHeaders(t, r.method+" "+r.path, resp)
		}
		// Refusals carry them too.
		resp := p.do(t, r.method, r.path, map[string]string{"Host": "evil.example"}, c)
		checkHeaders(t, "refused "+r.method+" "+r.path, resp)
	}
}

func TestGuardRefusals(t *testing.T) {
	p := newTestPage(t, Options{})
	c := p.session(t)
	own := "http://" + p.addr()
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"foreign Host", map[string]string{"Host": "evil.example", "Content-Type": "application/json"}, 403},
		{"rebound Host with our port", map[string]string{"Host": "attacker.test:" + strings.Split(p.addr(), ":")[1], "Content-Type": "application/json"}, 403},
		{"foreign Origin", map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403},
		{"null Origin", map[string]string{"Origin": "null", "Content-Type": "application/json"}, 403},
		{"other loopback port", map[string]string{"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"}, 403},
		{"https Origin", map[string]string{"Origin": "https://" + p.addr(), "Content-Type": "application/json"}, 403},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, 403},
	} {
		for _, r := range routes {
			before := p.reached.Load()
			resp := p.do(t, r.method, r.path, tc.hdr, c)
			if resp.StatusCode != tc.want {
				t.Errorf("%s: %s %s = %d, want %d", tc.name, r.method, r.path, resp.StatusCode, tc.want)
			}
			if p.reached.Load() != before {
				t.Errorf("%s: %s %s reached the API", tc.name, r.method, r.path)
			}
		}
	}
	// A change from a sibling site (another port of 127.0.0.1) is refused
	// even without an Origin.
	for _, r := range routes {
		if r.method == "GET" {
			continue
		}
		resp := p.do(t, r.method, r.path, map[string]string{"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"}, c)
		if resp.StatusCode != 403 {
			t.Errorf("same-site %s %s = %d, want 403", r.method, r.path, resp.StatusCode)
		}
	}
	// The page's own requests pass.
	resp := p.do(t, "PUT", "/api/v1/settings", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, c)
	if resp.StatusCode != 200 {
		t.Errorf("same-origin PUT = %d, want 200", resp.StatusCode)
	}
}

func TestSimpleContentTypesGet415(t *testing.T) {
	p := newTestPage(t, Options{})
	c := p.session(t)
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"} {
		for _, r := range routes {
			if r.method == "GET" {
				continue
			}
			before := p.reached.Load()
			resp := p.do(t, r.method, r.path, map[string]string{"Content-Type": ct}, c)
			if resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("%q: %s %s = %d, want 415", ct, r.method, r.path, resp.StatusCode)
			}
			if p.reached.Load() != before {
				t.Errorf("%q: %s %s reached the API", ct, r.method, r.path)
			}
		}
	}
	resp := p.do(t, "POST", "/api/v1/servers", map[string]string{"Content-Type": "application/json; charset=utf-8"}, c)
	if resp.StatusCode != 200 {
		t.Errorf("application/json; charset=utf-8 = %d, want 200", resp.StatusCode)
	}
}

func TestAPINeedsTheSession(t *testing.T) {
	p := newTestPage(t, Options{})
	json := map[string]string{"Content-Type": "application/json"}
	forged := &http.Cookie{Name: cookieName, Value: strings.Repeat("a", 64)}
	for _, r := range routes {
		if !strings.HasPrefix(r.path, "/api/") && r.path != "/logout" {
			continue
		}
		for _, c := range []*http.Cookie{nil, forged} {
			resp := p.do(t, r.method, r.path, json, c)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with cookie %v = %d, want 401", r.method, r.path, c != nil, resp.StatusCode)
			}
		}
	}
	if n := p.reached.Load(); n != 0 {
		t.Errorf("the API was reached %d times without a session", n)
	}
	// With one: the prefix is taken off, and answers are never cached,
	// even those whose handler says otherwise.
	c := p.session(t)
	resp := p.do(t, "GET", "/api/v1/events", nil, c)
	if resp.StatusCode != 200 || p.path.Load() != "/v1/events" {
		t.Fatalf("GET /api/v1/events = %d, API saw %v", resp.StatusCode, p.path.Load())
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	// Logging out ends the session.
	if resp := p.do(t, "POST", "/logout", json, c); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout = %d", resp.StatusCode)
	}
	if resp := p.do(t, "GET", "/api/v1/status", nil, c); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after logout = %d, want 401", resp.StatusCode)
	}
}

func TestLoginCodeIsSingleUse(t *testing.T) {
	p := newTestPage(t, Options{})
	link, exp, err := p.LoginLink(p.addr())
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(exp) > DefaultCodeTTL || time.Until(exp) <= 0 {
		t.Errorf("expires in %v", time.Until(exp))
	}
	u, _ := url.Parse(link)
	if u.Host != p.addr() || u.Path != "/login" || len(u.Query().Get("code")) != 64 {
		t.Errorf("link %q", link)
	}
	resp := p.do(t, "GET", link, nil, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/#"+pageTokenParam+"=") {
		t.Fatalf("first use: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
	if resp := p.do(t, "GET", link, nil, nil); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("second use: %d, cookie %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	for _, bad := range []string{"/login", "/login?code=", "/login?code=" + strings.Repeat("0", 64)} {
		if resp := p.do(t, "GET", bad, nil, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", bad, resp.StatusCode)
		}
	}
	// Only GET redeems a code.
	link2, _, _ := p.LoginLink(p.addr())
	if resp := p.do(t, "POST", link2, map[string]string{"Content-Type": "application/json"}, nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /login: %d", resp.StatusCode)
	}
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// withClock gives the page's sessions a fake clock, starting now.
func withClock(p *testPage) *fakeClock {
	c := &fakeClock{t: time.Now()}
	p.Server.auth.now = c.Now
	return c
}

// TestLoginCodeExpires: a login code works until its lifetime (the
// default's) is over, and not from then on.
func TestLoginCodeExpires(t *testing.T) {
	p := newTestPage(t, Options{})
	clock := withClock(p)
	early, _, err := p.LoginLink(p.addr())
	if err != nil {
		t.Fatal(err)
	}
	late, _, err := p.LoginLink(p.addr())
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(DefaultCodeTTL - time.Second)
	if resp := p.do(t, "GET", early, nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a code a second before it expires: %d, want a redirect", resp.StatusCode)
	}
	clock.advance(time.Second)
	if resp := p.do(t, "GET", late, nil, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("expired code: %d, want 403", resp.StatusCode)
	}
}

// TestSessionExpires: a session lasts its lifetime (the default's), and
// not a moment more.
func TestSessionExpires(t *testing.T) {
	p := newTestPage(t, Options{})
	clock := withClock(p)
	c := p.session(t)
	clock.advance(DefaultSessionTTL - time.Second)
	if resp := p.do(t, "GET", "/api/v1/status", nil, c); resp.StatusCode != http.StatusOK {
		t.Errorf("a session a second before it expires: %d, want 200", resp.StatusCode)
	}
	clock.advance(time.Second)
	if resp := p.do(t, "GET", "/api/v1/status", nil, c); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired session: %d, want 401", resp.StatusCode)
	}
}

func TestTablesStayBounded(t *testing.T) {
	s := newSessions(0, 0)
	for range 3 * maxCodes {
		if _, _, err := s.newCode(); err != nil {
			t.Fatal(err)
		}
	}
	code, _, _ := s.newCode()
	if len(s.codes) > maxCodes {
		t.Errorf("%d codes kept", len(s.codes))
	}
	if _, _, err := s.redeem(code); err != nil {
		t.Errorf("the newest code was dropped: %v", err)
	}
}
