package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// startOIDCProvider runs oidc-provider (npm, pinned in oidcprovider/) on
// 127.0.0.1 for the MCP server at resource, and returns its issuer.
func startOIDCProvider(t *testing.T, resource, m2mSecret string, accessTTL int) string {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(), "internal", "e2e", "oidcprovider")
	nm := testenv.NPMInstall(t, src, "oidc-provider")
	// The script runs beside its node_modules, where its import resolves.
	script := filepath.Join(filepath.Dir(nm), "provider.mjs")
	data, err := os.ReadFile(filepath.Join(src, "provider.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, data, 0o644); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	cmd := exec.Command("node", script, strconv.Itoa(port), resource, m2mSecret, strconv.Itoa(accessTTL))
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("oidc-provider stderr:\n%s", stderr.String())
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if iss, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- iss
			}
		}
	}()
	select {
	case iss := <-ready:
		return iss
	case <-time.After(30 * time.Second):
		t.Fatalf("oidc-provider did not start:\n%s", stderr.String())
	}
	return ""
}

// oidcResource is an MCP server that takes the JWT access tokens
// oidc-provider issues for it: signature by the provider's keys, issuer,
// audience, expiry, and for a DPoP-bound token (cnf.jkt) the DPoP scheme
// with a proof of that key.
type oidcResource struct {
	URL    string
	issuer string

	mu      sync.Mutex
	schemes []string // Authorization schemes of accepted requests
	bound   int      // accepted requests whose token was DPoP-bound
}

func startOIDCResource(t *testing.T) *oidcResource {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs := &oidcResource{URL: "http://" + ln.Addr().String() + "/mcp"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "oidc-protected", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	prm := strings.Replace(rs.URL, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL, "authorization_servers": []string{rs.issuer}, "scopes_supported": []string{"read"}})
	})
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rs.check(r); err != nil {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s"`, prm))
			http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return rs
}

func (rs *oidcResource) check(r *http.Request) error {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || tok == "" {
		return fmt.Errorf("no token")
	}
	obj, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return fmt.Errorf("not a JWT")
	}
	resp, err := http.Get(rs.issuer + "/jwks")
	if err != nil {
		return err
	}
	var set jose.JSONWebKeySet
	err = json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	if err != nil || len(obj.Signatures) != 1 {
		return fmt.Errorf("no keys")
	}
	keys := set.Key(obj.Signatures[0].Header.KeyID)
	if len(keys) == 0 {
		return fmt.Errorf("unknown key")
	}
	payload, err := obj.Verify(keys[0])
	if err != nil {
		return fmt.Errorf("bad signature")
	}
	var c struct {
		Iss string  `json:"iss"`
		Aud any     `json:"aud"`
		Exp float64 `json:"exp"`
		Cnf struct {
			JKT string `json:"jkt"`
		} `json:"cnf"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return err
	}
	if c.Iss != rs.issuer || c.Aud != rs.URL || time.Unix(int64(c.Exp), 0).Before(time.Now()) {
		return fmt.Errorf("wrong issuer, audience or expired")
	}
	if c.Cnf.JKT != "" {
		if scheme != "DPoP" {
			return fmt.Errorf("a DPoP-bound token without the DPoP scheme")
		}
		p, err := authserver.CheckProof(r, rs.URL, tok)
		if err != nil || p.JKT != c.Cnf.JKT {
			return fmt.Errorf("bad DPoP proof")
		}
	} else if scheme != "Bearer" {
		return fmt.Errorf("scheme %s", scheme)
	}
	rs.mu.Lock()
	rs.schemes = append(rs.schemes, scheme)
	if c.Cnf.JKT != "" {
		rs.bound++
	}
	rs.mu.Unlock()
	return nil
}

// approveWithCookies plays the person's browser against oidc-provider,
// which keeps the login in cookies across its redirects: it opens the URL
// the daemon gave the opener and follows every redirect, the last one to
// the daemon's loopback listener.
func approveWithCookies(t *testing.T, record string) <-chan error {
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			data, _ := os.ReadFile(record)
			if u := strings.TrimSpace(string(data)); u != "" {
				os.Remove(record)
				jar, _ := cookiejar.New(nil)
				c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
				resp, err := c.Get(u)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("the browser ended on HTTP %d at %s", resp.StatusCode, resp.Request.URL.Redacted())
					}
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

// oauthFileSecrets lists the tokens and client secrets oauth.json holds.
func oauthFileSecrets(t *testing.T, home string) (secrets []string, refresh map[string]string, clients map[string][2]string) {
	raw, err := os.ReadFile(filepath.Join(home, "oauth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Logins map[string]struct {
			Server string
			Client struct{ ID, Secret string }
			Token  *struct{ Access, Refresh string }
		}
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	refresh, clients = map[string]string{}, map[string][2]string{}
	for _, e := range f.Logins {
		clients[e.Server] = [2]string{e.Client.ID, e.Client.Secret}
		for _, s := range []string{e.Client.Secret} {
			if s != "" {
				secrets = append(secrets, s)
			}
		}
		if e.Token != nil {
			secrets = append(secrets, e.Token.Access)
			if e.Token.Refresh != "" {
				secrets = append(secrets, e.Token.Refresh)
				refresh[e.Server] = e.Token.Refresh
			}
		}
	}
	return secrets, refresh, clients
}

func loginWith(t *testing.T, e *testenv.Env, record, name string) testenv.Result {
	t.Helper()
	done := approveWithCookies(t, record)
	r := e.Run("", "login", name)
	if r.Code != 0 {
		t.Fatalf("login: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := <-done; err != nil {
		t.Fatalf("browser: %v", err)
	}
	return r
}

// TestOAuthAgainstOIDCProvider runs Plexus's OAuth client against a
// certified OpenID provider nobody here wrote: add → login → call →
// expiry and refresh (rotating) → daemon restart → revocation → re-login,
// plus a client-credentials server, with canary checks that no token or
// secret shows in the logs, the status or the API.
func TestOAuthAgainstOIDCProvider(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts oidc-provider from npm")
	}
	const m2mSecret = "CANARY-oidc-m2m-secret-0c7d"
	rs := startOIDCResource(t)
	// Access tokens live 30 s, under the 60 s refresh margin: every use
	// refreshes first, so rotation is exercised on every call.
	rs.issuer = startOIDCProvider(t, rs.URL, m2mSecret, 30)

	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script, "OIDC_M2M_SECRET=" + m2mSecret}
	e.StartDaemon()

	// add: the server answers 401 and is saved as needing a login.
	out := e.MustRun("add", "op", rs.URL)
	mustContain(t, "add", out, "needs login")

	// login: discovery (RFC 9728, then OpenID discovery: oidc-provider has
	// no RFC 8414 document), dynamic registration, PKCE, resource, DPoP.
	lr := loginWith(t, e, record, "op")
	st := waitState(t, e, "op", "ready", 20*time.Second)
	if st.Auth == nil || !st.Auth.LoggedIn || st.Auth.Issuer != rs.issuer {
		t.Fatalf("status after login: %+v", st.Auth)
	}
	callEcho(t, e, "op")
	rs.mu.Lock()
	if rs.bound == 0 || slices.Contains(rs.schemes, "Bearer") {
		t.Errorf("oidc-provider offers DPoP, but the tokens were not DPoP-bound: schemes %v", rs.schemes)
	}
	rs.mu.Unlock()

	// Expiry and refresh: each call refreshes, and the refresh token rotates.
	_, r1, _ := oauthFileSecrets(t, e.Home)
	callEcho(t, e, "op")
	secrets, r2, clients := oauthFileSecrets(t, e.Home)
	if r1["op"] == "" || r1["op"] == r2["op"] {
		t.Fatalf("the refresh token did not rotate (had one: %v)", r1["op"] != "")
	}

	// Daemon restart: the stored tokens and DPoP key carry on.
	e.StopDaemon()
	e.StartDaemon()
	waitState(t, e, "op", "ready", 20*time.Second)
	callEcho(t, e, "op")

	// Revocation of the grant at the provider: the next refresh fails, the
	// server needs a login, and a new login mends it.
	secrets2, r3, _ := oauthFileSecrets(t, e.Home)
	secrets = append(secrets, secrets2...)
	form := url.Values{"token": {r3["op"]}, "token_type_hint": {"refresh_token"}}
	req, _ := http.NewRequest(http.MethodPost, rs.issuer+"/token/revocation", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clients["op"][0]), url.QueryEscape(clients["op"][1]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revocation: %v %v", resp, err)
	}
	resp.Body.Close()
	tool := toolNamed(t, tools(t, e, "--server", "op"), "op", "echo")
	if r := e.Run("", "call", tool.Name, `{"text":"after revocation"}`); r.Code == 0 {
		t.Fatal("a call after the revocation succeeded")
	}
	deadline := time.Now().Add(20 * time.Second)
	for st := servers(t, e)["op"]; st.Auth == nil || !st.Auth.NeedsLogin; st = servers(t, e)["op"] {
		if time.Now().After(deadline) {
			t.Fatalf("after revocation: %s %+v", st.State, st.Auth)
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := servers(t, e)["op"].Since
	lr2 := loginWith(t, e, record, "op")
	// The login restarts the server: wait for the new start.
	deadline = time.Now().Add(20 * time.Second)
	for st := servers(t, e)["op"]; st.State != "ready" || !st.Since.After(before) || st.Auth == nil || st.Auth.NeedsLogin; st = servers(t, e)["op"] {
		if time.Now().After(deadline) {
			t.Fatalf("after the new login: %s %+v", st.State, st.Auth)
		}
		time.Sleep(50 * time.Millisecond)
	}
	callEcho(t, e, "op")

	// A machine-to-machine server at the same provider: client credentials,
	// no browser.
	ar := e.Run("", "add", "m2m", rs.URL, "--oauth-grant", "client_credentials", "--client-id", "plexus-m2m", "--client-secret-env", "OIDC_M2M_SECRET")
	if ar.Code != 0 {
		t.Fatalf("add m2m: %d\n%s\n%s", ar.Code, ar.Stdout, ar.Stderr)
	}
	waitState(t, e, "m2m", "ready", 20*time.Second)
	callEcho(t, e, "m2m")

	secrets3, _, _ := oauthFileSecrets(t, e.Home)
	secrets = append(append(secrets, secrets3...), m2mSecret)
	raw, _ := os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	if strings.Contains(string(raw), m2mSecret) {
		t.Error("oauth.json holds the configured client secret")
	}
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	cfg, _ := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	for what, text := range map[string]string{
		"status": e.MustRun("status", "--json"), "ls": e.MustRun("ls", "--json"), "logs.jsonl": string(logs),
		"extensions.json": string(cfg), "daemon output": e.DaemonOutput(),
		"logins": lr.Stdout + lr.Stderr + lr2.Stdout + lr2.Stderr, "add": out + ar.Stdout + ar.Stderr,
	} {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s shows a token or a client secret", what)
			}
		}
	}
}
