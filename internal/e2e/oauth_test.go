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
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// browser is a test-controlled BROWSER: a script that records the URL it
// was given. The test then plays the person: it opens the URL, and the
// authorization server redirects to the daemon's loopback listener.
func browser(t *testing.T) (script, record string) {
	dir := t.TempDir()
	record = filepath.Join(dir, "opened")
	script = filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '"+record+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, record
}

// approveInBrowser waits for the opener to have run, then opens its URL.
func approveInBrowser(t *testing.T, record string) <-chan error {
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			data, _ := os.ReadFile(record)
			if u := strings.TrimSpace(string(data)); u != "" {
				os.Remove(record)
				resp, err := http.Get(u)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		done <- os.ErrDeadlineExceeded
	}()
	return done
}

func callEcho(t *testing.T, e *testenv.Env, name string) {
	t.Helper()
	tool := toolNamed(t, tools(t, e, "--server", name), name, "echo")
	out := e.MustRun("call", tool.Name, `{"text":"through oauth"}`)
	mustContain(t, "call", out, "through oauth")
}

func TestOAuthLoginSurvivesExpiryAndRestart(t *testing.T) {
	t.Parallel()
	// Access tokens live 6 s: the daemon refreshes each halfway.
	as := authserver.Start(t, authserver.Options{AccessTTL: 6 * time.Second, Scopes: []string{"read"}})
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()

	out := e.MustRun("add", "srv", as.MCPURL)
	mustContain(t, "add", out, "needs login")
	if st := servers(t, e)["srv"]; st.Auth == nil || !st.Auth.NeedsLogin {
		t.Fatalf("status before login: %+v", st.Auth)
	}

	done := approveInBrowser(t, record)
	r := e.Run("", "login", "srv")
	if r.Code != 0 {
		t.Fatalf("login: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := <-done; err != nil {
		t.Fatalf("browser: %v", err)
	}
	mustContain(t, "login", r.Stdout, "logged in to srv (ready")
	st := waitState(t, e, "srv", "ready", 20*time.Second)
	if st.Auth == nil || !st.Auth.LoggedIn || st.Auth.Issuer != as.URL || st.Auth.ExpiresAt == nil {
		t.Fatalf("status after login: %+v", st.Auth)
	}
	callEcho(t, e, "srv")

	// The token is renewed before it expires, with nothing using it: a
	// 6 s token halfway through its life. Its expiry moves on, and no
	// token the server saw had expired (the server refuses one).
	exp := servers(t, e)["srv"].Auth.ExpiresAt
	if exp == nil {
		t.Fatal("no expiry in the status of a logged-in server")
	}
	before := as.Refreshes.Load()
	deadline := time.Now().Add(15 * time.Second)
	for as.Refreshes.Load() == before {
		if time.Now().After(deadline) {
			t.Fatalf("no refresh before the token expired at %v (now %v)", exp, time.Now())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if now := servers(t, e)["srv"].Auth.ExpiresAt; now == nil || !now.After(*exp) {
		t.Fatalf("the refresh did not move the expiry: %v, then %v", exp, now)
	}
	callEcho(t, e, "srv")

	e.StopDaemon()
	e.StartDaemon()
	waitState(t, e, "srv", "ready", 20*time.Second)
	callEcho(t, e, "srv")

	// Canaries: nothing Plexus holds for the login shows anywhere else.
	raw, err := os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(e.Home, "oauth.json")); m != 0o600 {
		t.Errorf("oauth.json mode %o", m)
	}
	var f struct {
		Logins map[string]struct {
			Client struct{ Secret string }
			Token  struct{ Access, Refresh string }
		}
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, en := range f.Logins {
		secrets = append(secrets, en.Client.Secret, en.Token.Access, en.Token.Refresh)
	}
	if len(secrets) != 3 || slicesHasEmpty(secrets) {
		t.Fatalf("expected a client secret and two tokens in oauth.json")
	}
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	// The login is a record of the audit log, which holds no token.
	logins := e.MustRun("audit", "--kind", "login", "--server", "srv", "--json")
	mustContain(t, "audit of the login", logins, `"outcome":"ok","reason":"authorization_code"`)
	auditLog, _ := os.ReadFile(filepath.Join(e.Home, "audit.jsonl"))
	outputs := map[string]string{
		"status": e.MustRun("status", "--json"), "ls": e.MustRun("ls", "--json"), "logs.jsonl": string(logs),
		"daemon output": e.DaemonOutput(), "login": r.Stdout + r.Stderr, "audit.jsonl": string(auditLog),
	}
	for what, text := range outputs {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a token or the client secret", what)
			}
		}
	}

	out = e.MustRun("logout", "srv")
	mustContain(t, "logout", out, "logged out of srv")
	raw, _ = os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Fatal("logout left a token or the registration in oauth.json")
		}
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		st := servers(t, e)["srv"]
		if st.Auth != nil && st.Auth.NeedsLogin && !st.Auth.LoggedIn {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after logout: %s %+v", st.State, st.Auth)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOAuthMaliciousAuthorizationEndpointRunsNothing(t *testing.T) {
	t.Parallel()
	pwned := filepath.Join(t.TempDir(), "pwned")
	as := authserver.Start(t, authserver.Options{AuthorizationEndpoint: "https://evil.example/a;touch${IFS}" + pwned})
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("add", "evil", as.MCPURL)
	r := e.Run("", "login", "evil")
	if r.Code == 0 {
		t.Fatalf("login with a malicious endpoint succeeded:\n%s", r.Stdout)
	}
	mustContain(t, "login error", r.Stderr, "authorization_endpoint")
	if _, err := os.Stat(record); err == nil {
		t.Error("the browser was opened")
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the endpoint's command ran")
	}
}

func slicesHasEmpty(ss []string) bool {
	for _, s := range ss {
		if s == "" {
			return true
		}
	}
	return false
}

// TestOAuthRevokedLoginIsNeedsLogin: a login revoked at the
// authorization server (the token and the refresh token refused) makes the
// server "needs-login" — not ready, not restarted, not crash-looping — and
// a call fails saying to run `plexus login NAME`, not that the connection
// was lost and the outcome is unknown. A refused access token whose
// refresh token still works is refreshed, and the call goes through.
func TestOAuthRevokedLoginIsNeedsLogin(t *testing.T) {
	t.Parallel()
	as := authserver.Start(t, authserver.Options{})
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("add", "srv", as.MCPURL)
	// Its advice is to log in, not to configure a header.
	if st := e.MustRun("status"); !strings.Contains(st, "plexus login srv") || strings.Contains(st, "plexus edit") {
		t.Errorf("status before the login:\n%s", st)
	}
	done := approveInBrowser(t, record)
	if r := e.Run("", "login", "srv"); r.Code != 0 {
		t.Fatalf("login: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitState(t, e, "srv", "ready", 20*time.Second)
	echo := toolNamed(t, tools(t, e, "--server", "srv"), "srv", "echo").Name

	as.RevokeAccess()
	out := e.MustRun("call", echo, `{"text":"after the access token was revoked"}`)
	mustContain(t, "call", out, "after the access token was revoked")

	as.Revoke()
	r := e.Run("", "call", echo, `{"text":"after the grant was revoked"}`)
	text := r.Stdout + r.Stderr
	if r.Code == 0 || !strings.Contains(text, "plexus login srv") || strings.Contains(text, "outcome") || strings.Contains(text, "lost") {
		t.Fatalf("a call after the grant was revoked: exit %d: %s", r.Code, text)
	}
	st := waitState(t, e, "srv", apitype.StateNeedsLogin, 10*time.Second)
	restarts := st.Restarts
	r = e.Run("", "call", echo, `{"text":"while it needs a login"}`)
	if text := r.Stdout + r.Stderr; r.Code == 0 || !strings.Contains(text, "plexus login srv") {
		t.Fatalf("a call while it needs a login: exit %d: %s", r.Code, text)
	}
	time.Sleep(1500 * time.Millisecond)
	if st := servers(t, e)["srv"]; st.State != apitype.StateNeedsLogin || st.CrashLooping || st.Restarts != restarts || st.NextTryAt != nil {
		t.Fatalf("waiting for a login: %s crash-looping %v, restarts %d→%d, next try %v", st.State, st.CrashLooping, restarts, st.Restarts, st.NextTryAt)
	}
	if ls := e.MustRun("ls"); !strings.Contains(ls, "needs login") {
		t.Errorf("ls:\n%s", ls)
	}
	// The metrics have the state too.
	if m := scrapeMetrics(t, e); !strings.Contains(m, `plexus_server_state{server="srv",state="needs-login"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}

// scrapeMetrics reads /metrics on the daemon's loopback address.
func scrapeMetrics(t *testing.T, e *testenv.Env) string {
	t.Helper()
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil || st.HTTPAddr == "" {
		t.Fatalf("status has no HTTP address: %v", err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://"+st.HTTPAddr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestOAuthLoginWithoutRefreshToken: a login whose authorization server
// issued no refresh token says so, and when it ends.
func TestOAuthLoginWithoutRefreshToken(t *testing.T) {
	t.Parallel()
	as := authserver.Start(t, authserver.Options{NoRefreshToken: true})
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("add", "srv", as.MCPURL)
	done := approveInBrowser(t, record)
	r := e.Run("", "login", "srv")
	if err := <-done; err != nil || r.Code != 0 {
		t.Fatalf("login: %v %d\n%s\n%s", err, r.Code, r.Stdout, r.Stderr)
	}
	mustContain(t, "login", r.Stderr, "issued no refresh token: this login ends at")
	if st := servers(t, e)["srv"]; st.Auth == nil || !st.Auth.LoggedIn || st.Auth.RefreshToken || st.Auth.ExpiresAt == nil {
		t.Fatalf("status: %+v", st.Auth)
	}
}

// TestOAuthLoginRefusedByTheServer: a login whose tokens the server then
// refuses is not reported as done: `plexus login` exits non-zero with why,
// and the server needs a login still.
func TestOAuthLoginRefusedByTheServer(t *testing.T) {
	t.Parallel()
	as := authserver.Start(t, authserver.Options{RefuseTokens: true})
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("add", "srv", as.MCPURL)
	done := approveInBrowser(t, record)
	r := e.Run("", "login", "srv")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.Code == 0 || !strings.Contains(r.Stderr, "refused the token the login got") || strings.Contains(r.Stdout, "logged in to srv") {
		t.Fatalf("a login the server refused: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if st := servers(t, e)["srv"]; st.State != apitype.StateNeedsLogin || st.Auth == nil || st.Auth.Login != "failed" {
		t.Fatalf("after the refused login: %s %+v", st.State, st.Auth)
	}
}
