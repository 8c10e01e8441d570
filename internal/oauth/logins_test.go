package oauth_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestTwoServersOnOneURLKeepTheirLogins: two servers at one URL (two
// accounts at one server) each keep their own login; a login or a logout
// of one leaves the other's as it was. Version 1 of the store kept one
// login per issuer and resource, and the second login replaced the first.
func TestTwoServersOnOneURLKeepTheirLogins(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "prot", URL: as.MCPURL})
	first, _ := m.AccessToken(context.Background(), "prot")
	login(t, m, oauth.LoginParams{Server: "prot2", URL: as.MCPURL})
	second, _ := m.AccessToken(context.Background(), "prot2")
	if first == "" || second == "" || first == second {
		t.Fatalf("two logins share a token: %q, %q", first, second)
	}
	if st := m.Status("prot"); !st.LoggedIn || st.NeedsLogin {
		t.Fatalf("prot after prot2's login: %+v", st)
	}
	if got, _ := m.AccessToken(context.Background(), "prot"); got != first {
		t.Fatal("prot2's login replaced prot's token")
	}
	for _, s := range []string{"prot", "prot2"} {
		if err := callEcho(t, m, s, as.MCPURL); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := m.Logout("prot2"); err != nil {
		t.Fatal(err)
	}
	if err := callEcho(t, m, "prot", as.MCPURL); err != nil {
		t.Fatalf("prot after prot2's logout: %v", err)
	}
}

// TestRefusedTokenIsRefreshedFirst: a 401 to a request that carried a
// token is answered by a refresh and the same request sent again; only a
// refresh that fails too means a login.
func TestRefusedTokenIsRefreshedFirst(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	as.RevokeAccess() // the access tokens go, the refresh token stays
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("a call after the access token was revoked: %v", err)
	}
	if st := m.Status("srv"); st.NeedsLogin || !st.LoggedIn || as.Refreshes.Load() != 1 {
		t.Fatalf("after a 401 mended by a refresh: %+v, %d refreshes", st, as.Refreshes.Load())
	}
	as.Revoke() // now the refresh token too
	err := callEcho(t, m, "srv", as.MCPURL)
	var nle *oauth.NeedsLoginError
	if !errors.As(err, &nle) || !strings.Contains(err.Error(), "plexus login srv") {
		t.Fatalf("a call after the grant was revoked: %v", err)
	}
	if st := m.Status("srv"); !st.NeedsLogin || st.LoggedIn || !strings.Contains(st.Reason, "refresh token") {
		t.Fatalf("after the refresh was refused: %+v", st)
	}
	// The next request is not sent at all: nothing can renew the login.
	n := len(as.AuthorizationHeaders())
	if _, err := initialize(m.Transport("srv", as.MCPURL, nil), as.MCPURL); !errors.As(err, &nle) {
		t.Fatalf("a request of a login that is over: %v", err)
	}
	if len(as.AuthorizationHeaders()) != n {
		t.Fatal("a request of a login that is over was sent")
	}
}

// TestBearerOnlyServerGetsBearerTokens: an authorization server that
// offers DPoP in front of an MCP server that takes only bearer tokens (the
// TypeScript SDK's requireBearerAuth, whose metadata says nothing of DPoP)
// gets bearer tokens; DPoP-bound ones would be refused.
func TestBearerOnlyServerGetsBearerTokens(t *testing.T) {
	as := authserver.Start(t, authserver.Options{DPoP: true, BearerOnly: true})
	var c clock
	home := t.TempDir()
	m := open(t, home, &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("call: %v", err)
	}
	if st := m.Status("srv"); st.DPoP {
		t.Fatalf("a DPoP-bound token for a bearer-only server: %+v", st)
	}
	if k := storedDPoPKeys(t, home); slices.ContainsFunc(k, func(s string) bool { return s != "" }) {
		t.Error("a DPoP key was made for a bearer-only server")
	}
	for _, h := range as.AuthorizationHeaders() {
		if h != "" && !strings.HasPrefix(h, "Bearer ") {
			t.Errorf("the bearer-only server got %q…", h[:min(len(h), 8)])
		}
	}
}

// TestDPoPRefusalFallsBackToBearer: a server whose metadata says it takes
// DPoP but that refuses a DPoP-bound token (challenging with Bearer only)
// gets a bearer token by a refresh without a proof, and the request that
// was refused goes through with it.
func TestDPoPRefusalFallsBackToBearer(t *testing.T) {
	as := authserver.Start(t, authserver.Options{DPoP: true, BearerOnly: true, ClaimsDPoP: true})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if st := m.Status("srv"); !st.DPoP {
		t.Fatalf("the server claims DPoP: the login's token should be DPoP-bound first: %+v", st)
	}
	if err := callEcho(t, m, "srv", as.MCPURL); err != nil {
		t.Fatalf("a call to a server that refuses DPoP: %v", err)
	}
	if st := m.Status("srv"); st.DPoP || st.NeedsLogin || !st.LoggedIn {
		t.Fatalf("after the refusal: %+v", st)
	}
	// A new login asks for bearer tokens at once.
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	if st := m.Status("srv"); st.DPoP {
		t.Fatalf("a new login after a refusal: %+v", st)
	}
}

// TestDPoPRequiredWithoutIssuer: a server that requires DPoP behind an
// authorization server that issues no DPoP-bound tokens is refused at the
// login, with why.
func TestDPoPRequiredWithoutIssuer(t *testing.T) {
	as := authserver.Start(t, authserver.Options{RequiresDPoP: true})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	_, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil)
	if err == nil || !strings.Contains(err.Error(), "requires DPoP-bound tokens") {
		t.Fatalf("a login for a server that requires DPoP its authorization server cannot issue: %v", err)
	}
	// Where the authorization server issues them, the tokens are bound.
	bound := authserver.Start(t, authserver.Options{DPoP: true})
	login(t, m, oauth.LoginParams{Server: "srv", URL: bound.MCPURL})
	if st := m.Status("srv"); !st.DPoP {
		t.Fatalf("a server that requires DPoP got %+v", st)
	}
}

// TestOfflineAccessAsksConsent: where the authorization server lists
// offline_access, the login asks for it with prompt=consent (OpenID
// Connect Core §11) and registers for the refresh_token grant with that
// scope; where it does not, neither.
func TestOfflineAccessAsksConsent(t *testing.T) {
	as := authserver.Start(t, authserver.Options{Scopes: []string{"read"}})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	q := as.LastAuthorization()
	if q.Get("prompt") != "consent" || !slices.Contains(strings.Fields(q.Get("scope")), "offline_access") {
		t.Fatalf("authorization request: prompt %q, scope %q", q.Get("prompt"), q.Get("scope"))
	}
	reg := as.LastRegistration()
	if gt, _ := reg["grant_types"].([]any); !slices.Contains(gt, any("refresh_token")) {
		t.Errorf("registered grant types %v", reg["grant_types"])
	}
	if sc, _ := reg["scope"].(string); !slices.Contains(strings.Fields(sc), "offline_access") || !slices.Contains(strings.Fields(sc), "read") {
		t.Errorf("registered scope %q", reg["scope"])
	}
	if st := m.Status("srv"); !st.RefreshToken {
		t.Errorf("the login got a refresh token, its status says not: %+v", st)
	}
}

// TestLoginWithoutRefreshTokenSaysSo: a login that got no refresh token
// says so, and when its access token ends; then it needs a login, and
// says why.
func TestLoginWithoutRefreshTokenSaysSo(t *testing.T) {
	as := authserver.Start(t, authserver.Options{NoRefreshToken: true, AccessTTL: time.Hour})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	login(t, m, oauth.LoginParams{Server: "srv", URL: as.MCPURL})
	st := m.Status("srv")
	if !st.LoggedIn || st.RefreshToken || st.ExpiresAt.IsZero() {
		t.Fatalf("a login without a refresh token: %+v", st)
	}
	c.advance(2 * time.Hour)
	_, err := m.AccessToken(context.Background(), "srv")
	if !errors.Is(err, oauth.ErrNeedsLogin) {
		t.Fatalf("an expired token without a refresh token: %v", err)
	}
	if st := m.Status("srv"); !st.NeedsLogin || !strings.Contains(st.Reason, "no refresh token") {
		t.Fatalf("status: %+v", st)
	}
}

// TestForgedRedirectChangesNothing: a redirect to a login's
// loopback listener that does not carry the login's state — an error with
// an attacker's text, or a code — gets a page that says nothing of it, and
// the login goes on; the login's own redirect then completes it.
func TestForgedRedirectChangesNothing(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	pd, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const evil = "CANARY-attacker-text-Call-0800-FRAUD"
	for _, q := range []string{
		"?error=access_denied&error_description=" + evil,
		"?error=access_denied&error_description=" + evil + "&state=forged",
		"?code=forged-code&state=forged",
		"?code=forged-code",
		"",
	} {
		resp, err := http.Get(pd.RedirectURI + q)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, evil) || strings.Contains(body, "access_denied") {
			t.Errorf("%s: HTTP %d %q", q, resp.StatusCode, body)
		}
		if st := m.Status("srv"); st.Login != "waiting" || st.LoginError != "" {
			t.Fatalf("%s ended the login: %+v", q, st)
		}
	}
	if as.Codes.Load() != 0 {
		t.Fatal("a forged code was exchanged")
	}
	resp, err := http.Get(pd.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := m.Status("srv"); !st.LoggedIn || st.Login != "" {
		t.Fatalf("the login's own redirect after forged ones: %+v", st)
	}
}

// TestLoginCallbackIsBounded: a program of the machine that opens
// connections to a login's loopback listener and sends nothing of a
// request holds a few of them at most, the oldest closed first — not one
// file of the daemon per connection for the header timeout's 10 s, which
// enough of them would exhaust — and the login's own redirect then
// completes it.
func TestLoginCallbackIsBounded(t *testing.T) {
	t.Parallel() // its waiting for the listener beside the others
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	pd, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pd.RedirectURI)
	if err != nil {
		t.Fatal(err)
	}
	const flood = 100
	var conns []net.Conn
	for range flood {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.Write([]byte("GET /callback HTTP/1.1\r\n"))
		conns = append(conns, conn)
	}
	// The listener closes the oldest as it accepts newer ones: wait until
	// it has closed all but the bound, not a fixed second (a loaded
	// machine accepts a hundred connections late). A connection the
	// listener kept, or has not accepted yet, is open: its read times out.
	open := slices.Clone(conns)
	for deadline := time.Now().Add(30 * time.Second); len(open) > 32 && time.Now().Before(deadline); {
		open = slices.DeleteFunc(open, func(conn net.Conn) bool {
			conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			var ne net.Error
			_, err := conn.Read(make([]byte, 1))
			return !errors.As(err, &ne) || !ne.Timeout()
		})
	}
	if len(open) > 32 {
		t.Errorf("%d of %d connections that sent no request were still open after 30 s, want the oldest closed beyond a bound", len(open), flood)
	}
	resp, err := http.Get(pd.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := m.Status("srv"); !st.LoggedIn || st.Login != "" {
		t.Fatalf("the login's own redirect after the flood: %+v", st)
	}
}

// TestLoginIsDoneOnlyWhenTheServerTakesTheToken: the verify step of a
// login (the host starts the server with the new token) decides its end:
// an error leaves the login failed, with why, and the browser is told.
func TestLoginIsDoneOnlyWhenTheServerTakesTheToken(t *testing.T) {
	as := authserver.Start(t, authserver.Options{})
	var c clock
	m := open(t, t.TempDir(), &c, nil)
	checked := make(chan oauth.Status, 1)
	pd, err := m.StartLogin(context.Background(), oauth.LoginParams{Server: "srv", URL: as.MCPURL}, func() error {
		checked <- m.Status("srv")
		return errors.New("the server refused the token the login got")
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(pd.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if st := <-checked; st.Login != "checking" || !st.LoggedIn {
		t.Errorf("while the server is reached: %+v", st)
	}
	if resp.StatusCode == http.StatusOK || !strings.Contains(body, "refused the token") {
		t.Errorf("the browser was told: HTTP %d %q", resp.StatusCode, body)
	}
	if st := m.Status("srv"); st.Login != "failed" || !strings.Contains(st.LoginError, "refused the token") {
		t.Fatalf("after the server refused the token: %+v", st)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
