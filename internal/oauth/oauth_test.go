package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// clock is a Now the test moves forward.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }
func open(t *testing.T, home string, c *clock, opt func(*oauth.Options)) *oauth.Manager {
	t.Helper()
	o := oauth.Options{Home: home, Now: c.now}
	if opt != nil {
		opt(&o)
	}
	m, err := oauth.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// login runs a whole login as a browser would: open the URL, follow the
// redirect to the loopback listener.
func login(t *testing.T, m *oauth.Manager, p oauth.LoginParams) {
	t.Helper()
	pd, err := m.StartLogin(context.Background(), p, nil)
	if err != nil {
		t.Fatalf("StartLogin: %v", err)
	}
	resp, err := http.Get(pd.AuthURL)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("browser got HTTP %d: %s", resp.StatusCode, body)
	}
	if st := m.Status(p.Server); !st.LoggedIn || st.Login != "" {
		t.Fatalf("after the redirect: %+v", st)
	}
}

// callEcho connects through the manager's transport and calls echo.
func callEcho(t *testing.T, m *oauth.Manager, server, mcpURL string) error {
	t.Helper()
	hc := &http.Client{Transport: m.Transport(server, mcpURL, nil)}
	c := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: hc}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New("tool error")
	}
	return nil
}

func TestLoginWithDynamicRegistrationSurvivesRestart(t *testing.T) {
	as := authserver.Start(t, authserver.Options{Scopes: []string{"read"}})
	home := t.TempDir()
	var c clock
	m := open(t, home, &c, nil)
	p := oauth.LoginParams{Server: "srv", URL: as.MCPURL}
	if err := callEcho(t, m, "srv", as.MCPURL); err == nil {
		t.Fatal("connected without a login")
	}
	if st := m.Status("srv"); !st.NeedsLogin {
		t.Fatalf("a 401 did not mark the server: %+v", st)
	}
	login(t, m, p)
	q := as.LastAuthorization()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != as.MCPURL || q.Get("scope") != "read offline_access" {
		t.Errorf("authorization request: %v", q)
	}
	if tq := as.LastTokenRequest(); tq.Get("resource") != as.MCPURL || tq.Get("code_verifier") == "" {
		t.Errorf("token request: %v", tq)
	}
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call after login: %v", err)
	}
	fi, err := os.Stat(filepath.Join(home, oauth.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("oauth.json: %v %v", fi, err)
	}
	// A restart: a new manager reads the same file.
	m2 := open(t, home, &c, nil)
	if err := callEcho(t, m2, "srv", as.MCPURL); err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	// The registration is reused: a second login registers nothing new.
	login(t, m2, p)
	if n := as.Registrations.Load(); n != 1 {
		t.Errorf("registrations = %d, want 1 (the kept one reused)", n)
	}
	if err := m2.Logout("srv"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(home, oauth.FileName))
	if strings.Contains(string(data), "dyn-") || strings.Contains(string(data), "at-") {
		t.Errorf("logout left the registration or tokens: %s", data)
	}
}

func TestRacingCallsRefreshOnce(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	first, _ := m.AccessToken(context.Background(), "srv")
	c.advance(2 * time.Hour) // past expiry
	const n = 8
	var wg sync.WaitGroup
	toks := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { toks[i], errs[i] = m.AccessToken(context.Background(), "srv") })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || toks[i] == "" || toks[i] == first || toks[i] != toks[0] {
			t.Fatalf("caller %d: %q %v (first %q)", i, toks[i], errs[i], first)
		}
	}
	if got := as.Refreshes.Load(); got != 1 {
		t.Fatalf("refreshes = %d, want exactly 1", got)
	}
	// The rotated refresh token works the next time; the spent one is gone.
	c.advance(2 * time.Hour)
	if _, err := m.AccessToken(context.Background(), "srv"); err != nil {
		t.Fatalf("second refresh: %v", err)
	}
	if got := as.Refreshes.Load(); got != 2 {
		t.Fatalf("refreshes = %d, want 2", got)
	}
}

func TestRevokedRefreshNeedsLogin(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	as.Revoke()
	if err := callEcho(t, m, "srv", as.MCPURL); err == nil {
		t.Fatal("a revoked token was accepted")
	}
	if st := m.Status("srv"); !st.NeedsLogin || st.LoggedIn {
		t.Fatalf("a 401 after revocation: %+v", st)
	}
	c.advance(2 * time.Hour)
	_, err := m.AccessToken(context.Background(), "srv")
	if !errors.Is(err, oauth.ErrNeedsLogin) {
		t.Fatalf("refresh with a revoked token: %v", err)
	}
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if st := m.Status("srv"); st.NeedsLogin {
		t.Fatalf("login did not clear NeedsLogin: %+v", st)
	}
}

// TestRequestsDuringARefusedRefreshNeedLogin: requests that come while a
// refused refresh ends the login fail unsent with ErrNeedsLogin, whether
// they waited for that refresh or came after it forgot the tokens; none
// goes out without a token, whose 401 a client would take for a lost
// connection ("outcome unknown") rather than a login to make.
func TestRequestsDuringARefusedRefreshNeedLogin(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	as.Revoke()
	c.advance(2 * time.Hour) // past expiry: each request renews the token first
	hc := &http.Client{Transport: m.Transport("srv", as.MCPURL, nil)}
	const n = 8
	codes := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := hc.Post(as.MCPURL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range n {
		if !errors.Is(errs[i], oauth.ErrNeedsLogin) {
			t.Errorf("request %d: HTTP %d, err %v; want ErrNeedsLogin, unsent", i, codes[i], errs[i])
		}
	}
	if st := m.Status("srv"); !st.NeedsLogin {
		t.Errorf("status %+v, want a login needed", st)
	}
}

func TestPreregisteredClientAndClientIDMetadataDocument(t *testing.T) {
	const secret = "CANARY-client-secret-7f3a"
	as := authserver.Start(t, authserver.Options{NoDCR: true, Clients: map[string]string{"pre": secret}})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	if _, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil); err == nil ||
		!strings.Contains(err.Error(), "oauth.clientId") {
		t.Fatalf("no registration possible: %v", err)
	}
	p := oauth.LoginParams{Server: "srv", URL: as.MCPURL, Manual: &oauth.Manual{ClientID: "pre", ClientSecret: secret}}
	login(t, m, p)
	if tq := as.LastTokenRequest(); tq.Get("client_id") != "pre" || tq.Get("client_secret") != secret {
		t.Errorf("token request did not use client_secret_post: %v", tq.Get("client_id"))
	}
	if s := m.Status("srv"); strings.Contains(strings.Join(append(s.Scopes, s.Issuer, s.Reason, s.LoginError), " "), secret) {
		t.Error("status shows the client secret")
	}

	cimd := authserver.Start(t, authserver.Options{NoDCR: true, CIMD: true})
	m2 := open(t, t.TempDir(), &c, func(o *oauth.Options) { o.MetadataDocumentURL = "https://plexus.example/client.json" })
	login(t, m2, oauth.LoginParams{Server: "srv", URL: cimd.MCPURL})
	if got := cimd.LastAuthorization().Get("client_id"); got != "https://plexus.example/client.json" {
		t.Errorf("client_id = %q, want the metadata document URL", got)
	}
}

func TestRefusals(t *testing.T) {
	var c clock
	for _, tc := range []struct {
		name string
		opts authserver.Options
		want string
	}{
		{"no PKCE advertised", authserver.Options{NoPKCE: true}, "PKCE"},
		{"file scheme", authserver.Options{AuthorizationEndpoint: "file:///etc/passwd"}, "authorization_endpoint"},
		{"javascript scheme", authserver.Options{AuthorizationEndpoint: "javascript:alert(1)"}, "authorization_endpoint"},
		{"shell metacharacters", authserver.Options{AuthorizationEndpoint: "https://evil.example/a;touch${IFS}/tmp/pwned"}, "metacharacter"},
		{"command substitution", authserver.Options{AuthorizationEndpoint: "https://evil.example/$(id)"}, "metacharacter"},
		{"an option", authserver.Options{AuthorizationEndpoint: "--help"}, "authorization_endpoint"},
		{"plain http elsewhere", authserver.Options{AuthorizationEndpoint: "http://evil.example/authorize"}, "HTTPS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := authserver.Start(t, tc.opts)
			m := open(t, t.TempDir(), &c, nil)
			_, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
			if st := m.Status("srv"); st.Login != "failed" || st.LoginError == "" {
				t.Errorf("status after a refused login: %+v", st)
			}
		})
	}
}

func TestRedirectChecks(t *testing.T) {
	var c clock
	t.Run("wrong iss", func(t *testing.T) {
		as := authserver.Start(t, authserver.Options{IssSupported: true, WrongIss: true})
		m := open(t, t.TempDir(), &c, nil)
		pd, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(pd.AuthURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if st := m.Status("srv"); st.LoggedIn || !strings.Contains(st.LoginError, "issuer") {
			t.Fatalf("a wrong iss was accepted: %+v", st)
		}
	})
	t.Run("iss required and right", func(t *testing.T) {
		as := authserver.Start(t, authserver.Options{IssSupported: true})
		m := open(t, t.TempDir(), &c, nil)
		login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	})
	t.Run("wrong state", func(t *testing.T) {
		// A pasted address without the login's state is refused and
		// changes nothing: the login goes on, and the right address
		// completes it.
		as := authserver.Start(t, authserver.Options{})
		m := open(t, t.TempDir(), &c, nil)
		resp := startNoFollow(t, m, as.MCPURL)
		loc := resp.Header.Get("Location")
		forged := strings.Replace(loc, "state=", "state=forged", 1)
		err := m.CompleteLogin(context.Background(), "srv", forged)
		if err == nil || !strings.Contains(err.Error(), "state") {
			t.Fatalf("a forged state: %v", err)
		}
		if as.Codes.Load() != 0 {
			t.Fatal("a code was exchanged")
		}
		if st := m.Status("srv"); st.Login != "waiting" {
			t.Fatalf("a forged redirect ended the login: %+v", st)
		}
		if err := m.CompleteLogin(context.Background(), "srv", loc); err != nil {
			t.Fatalf("the login's own redirect after a forged one: %v", err)
		}
	})
	t.Run("pasted redirect", func(t *testing.T) {
		as := authserver.Start(t, authserver.Options{})
		m := open(t, t.TempDir(), &c, nil)
		resp := startNoFollow(t, m, as.MCPURL)
		if err := m.CompleteLogin(context.Background(), "srv", "  "+resp.Header.Get("Location")+"\n"); err != nil {
			t.Fatal(err)
		}
		if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStepUp(t *testing.T) {
	as := authserver.Start(t, authserver.Options{Scopes: []string{"read"}})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	hc := &http.Client{Transport: m.Transport("srv", as.MCPURL, nil)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: as.MCPURL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "admin"}); err == nil {
		t.Fatal("admin without the scope")
	}
	// The server still serves what the login allows: it wants more
	// scopes, it does not need a login.
	if st := m.Status("srv"); st.NeedsLogin || !st.LoggedIn || !slices.Contains(st.MoreScopes, "admin") {
		t.Fatalf("403 insufficient_scope: %+v", st)
	}
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if got := as.LastAuthorization().Get("scope"); got != "read offline_access admin" {
		t.Fatalf("step-up asked for %q", got)
	}
}

func TestTransportSendsOnlyItsOwnToken(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	tok, _ := m.AccessToken(context.Background(), "srv")
	req, _ := http.NewRequest(http.MethodGet, as.MCPURL, nil)
	req.Header.Set("Authorization", "Bearer downstream-client-token")
	resp, err := m.Transport("srv", as.MCPURL, nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	hs := as.AuthorizationHeaders()
	if got := hs[len(hs)-1]; got != "Bearer "+tok {
		t.Fatalf("the server got %q", got)
	}
}

// startNoFollow starts a login and opens its URL without following the
// redirect: the answer's Location is what a person would paste back.
func startNoFollow(t *testing.T, m *oauth.Manager, mcpURL string) *http.Response {
	t.Helper()
	pd, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(pd.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
