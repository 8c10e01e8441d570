package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestOAuthAgainstOIDCProvider runs Plexus's OAuth client against a
// certified OpenID provider nobody here wrote (oidc-provider) in its four
// configurations — its defaults (DPoP offered), offline_access asking for
// consent at every login, refresh tokens rotated at every refresh, and
// revocation that holds at once (introspected tokens) — each in front of
// two MCP servers on the official TypeScript SDK: one that takes bearer
// tokens only, one that requires DPoP. For each: a login through a
// headless browser, a call, a refresh before the token expires with
// nothing using it, two agents sharing the one login, a second server on
// the same URL logged in as another account by pasting the address back,
// a daemon restart, and a revocation then a new login. Canary checks: no
// token or secret shows in the status, the logs or the CLI's output.
//
// Before logins were kept per account and DPoP went only where a server
// takes it, this failed at the first login: oidc-provider's DPoP-bound
// token went to the bearer-only server, which refused it, and `plexus
// login` said "logged in to prot (needs login …)".
func TestOAuthAgainstOIDCProvider(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts oidc-provider, TypeScript servers and Chromium from npm")
	}
	chrome := startBrowser(t)
	for _, config := range []string{"defaults", "consent", "rotation", "revocation"} {
		t.Run(config, func(t *testing.T) {
			t.Parallel()
			oidcMatrix(t, chrome, startOIDCPeers(t, config, 10*time.Second, ""))
		})
	}
	t.Run("client ID metadata document", func(t *testing.T) {
		t.Parallel()
		clientMetadataDocument(t, chrome)
	})
}

// clientMetadataDocument: with mcp.oauthClientMetadataUrl set, a login at
// an authorization server that supports client ID metadata documents
// (oidc-provider's clientIdMetadataDocument) uses that URL as Plexus's
// client_id: the server fetches the document the user hosts (here an
// https server on loopback), and nothing is registered.
func clientMetadataDocument(t *testing.T, chrome *chromium) {
	var docURL string
	var fetched sync.WaitGroup
	fetched.Add(1)
	var once sync.Once
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(fetched.Done)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "Plexus", "application_type": "native",
			"redirect_uris": []string{"http://127.0.0.1/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(doc.Close)
	docURL = doc.URL + "/oauth/plexus-client.json"
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: doc.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startOIDCPeers(t, "defaults", 10*time.Second, ca)

	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("settings", "set", "oauthClientMetadataUrl", docURL)
	mustContain(t, "settings get", e.MustRun("settings", "get", "oauthClientMetadataUrl"), docURL)
	e.MustRun("add", "doc", p.url("bearer"))
	browserLoginOf(t, e, chrome, record, oidcCheck{name: "doc", kind: "bearer", user: "carol"})
	fetched.Wait()
	mustContain(t, "whoami", whoami(t, e, "doc"), "account carol")
	var f struct {
		Logins map[string]struct {
			Client struct{ ID, Kind, Secret string }
		}
	}
	readJSONFile(t, filepath.Join(e.Home, "oauth.json"), &f)
	if c := f.Logins["doc"].Client; c.ID != docURL || c.Kind != "metadata-document" || c.Secret != "" {
		t.Fatalf("the login's client: %+v, want the document's URL and no registration", c)
	}
}

// oidcCheck is one account's server of the matrix, as the test knows it.
type oidcCheck struct {
	name, kind, user string
}

func oidcMatrix(t *testing.T, chrome *chromium, p *oidcPeers) {
	last := time.Now()
	step := func(what string) {
		t.Logf("%-40s %5.1fs", what, time.Since(last).Seconds())
		last = time.Now()
	}
	e := testenv.New(t)
	script, record := browser(t)
	e.ExtraEnv = []string{"BROWSER=" + script}
	e.StartDaemon()
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	var outputs []string // every CLI output, for the canaries

	kinds := []string{"bearer", "dpop"}
	alice := map[string]oidcCheck{}
	bob := map[string]oidcCheck{}
	for _, kind := range kinds {
		a := oidcCheck{name: kind, kind: kind, user: "alice"}
		b := oidcCheck{name: kind + "2", kind: kind, user: "bob"}
		alice[kind], bob[kind] = a, b

		// Added: it answers 401 and is saved as needing a login, a state
		// of its own.
		out := e.MustRun("add", a.name, p.url(kind))
		mustContain(t, "add", out, "needs login")
		if st := servers(t, e)[a.name]; st.State != apitype.StateNeedsLogin {
			t.Fatalf("%s before its login: %s %+v", a.name, st.State, st.Auth)
		}
		step(kind + ": add")

		// A login through the browser, done once the server took the token.
		outputs = append(outputs, browserLoginOf(t, e, chrome, record, a))
		st := servers(t, e)[a.name]
		if st.State != apitype.StateReady || st.Auth == nil || !st.Auth.LoggedIn || st.Auth.Issuer != p.issuer {
			t.Fatalf("%s after its login: %s %+v", a.name, st.State, st.Auth)
		}
		// offline_access asked with prompt=consent: a refresh token.
		if !st.Auth.RefreshToken {
			t.Errorf("%s: the login got no refresh token", a.name)
		}
		if st.Auth.DPoP != (kind == "dpop") {
			t.Errorf("%s: DPoP-bound tokens %v, want %v", a.name, st.Auth.DPoP, kind == "dpop")
		}
		mustContain(t, a.name+" whoami", whoami(t, e, a.name), "account alice")
		step(kind + ": browser login, call")

		// A second server on the same URL, logged in as bob by pasting
		// the address back: neither logs the other out.
		e.MustRun("add", b.name, p.url(kind))
		outputs = append(outputs, pasteLoginOf(t, e, chrome, b))
		mustContain(t, b.name+" whoami", whoami(t, e, b.name), "account bob")
		mustContain(t, a.name+" whoami after bob's login", whoami(t, e, a.name), "account alice")
		step(kind + ": second account, pasted login")

		// Two agents share the one login.
		twoAgents(t, e, a)
		step(kind + ": two agents")

		// Refreshed before it expires, with nothing using it.
		refreshedUnused(t, e, a.name, p.ttl)
		step(kind + ": refresh before expiry")
	}

	// A daemon restart keeps every login.
	e.StopDaemon()
	e.StartDaemon()
	for _, kind := range kinds {
		for _, c := range []oidcCheck{alice[kind], bob[kind]} {
			waitState(t, e, c.name, "ready", 30*time.Second)
			mustContain(t, c.name+" whoami after a restart", whoami(t, e, c.name), "account "+c.user)
		}
	}
	step("daemon restart")

	// A revocation at the provider, then a new login.
	for _, kind := range kinds {
		a := alice[kind]
		clients, refresh := oauthLogins(t, e.Home)
		before := servers(t, e)[a.name].Restarts
		p.revoke(t, clients[a.name][0], clients[a.name][1], refresh[a.name])
		if p.config == "revocation" {
			// Introspected tokens: the next call is refused at once, a
			// refresh is tried, and the call fails saying what to do.
			r := e.Run("", "call", toolOf(t, e, a.name, "whoami"), `{}`)
			text := r.Stdout + r.Stderr
			if r.Code == 0 || !strings.Contains(text, "plexus login "+a.name) || strings.Contains(text, "outcome") {
				t.Errorf("%s: a call after the revocation: exit %d: %s", a.name, r.Code, text)
			}
		}
		// JWTs stay valid until they expire; the refresh made halfway
		// through their life is refused: the login is over.
		step(kind + ": revoked")
		st := waitState(t, e, a.name, apitype.StateNeedsLogin, 3*p.ttl)
		step(kind + ": needs login")
		if st.CrashLooping || st.Auth == nil || !st.Auth.NeedsLogin || !strings.Contains(st.LastError, "plexus login "+a.name) {
			t.Errorf("%s after the revocation: %s %+v %q", a.name, st.State, st.Auth, st.LastError)
		}
		if ls := e.MustRun("ls"); !strings.Contains(lineOf(ls, a.name), "needs login") {
			t.Errorf("ls after the revocation:\n%s", ls)
		}
		r := e.Run("", "call", toolOf(t, e, a.name, "whoami"), `{}`)
		if text := r.Stdout + r.Stderr; r.Code == 0 || !strings.Contains(text, "plexus login "+a.name) || strings.Contains(text, "outcome") {
			t.Errorf("%s: a call while it needs a login: exit %d: %s", a.name, r.Code, text)
		}
		// Waiting for a login is no failure: no restarts meanwhile.
		time.Sleep(time.Second)
		if st := servers(t, e)[a.name]; st.State != apitype.StateNeedsLogin || st.CrashLooping || st.Restarts != before {
			t.Errorf("%s waiting for a login: %s, crash-looping %v, %d restarts (was %d)", a.name, st.State, st.CrashLooping, st.Restarts, before)
		}
		mustContain(t, bob[kind].name+" whoami after alice's revocation", whoami(t, e, bob[kind].name), "account bob")
		outputs = append(outputs, browserLoginOf(t, e, chrome, record, a))
		mustContain(t, a.name+" whoami after the new login", whoami(t, e, a.name), "account alice")
		step(kind + ": new login")
	}

	stats := p.stats(t)
	for _, kind := range kinds {
		s := stats[kind]
		if s.Expired != 0 {
			t.Errorf("the %s server was sent %d expired tokens: a token must be refreshed before it expires", kind, s.Expired)
		}
		want := map[string]string{"bearer": "Bearer", "dpop": "DPoP"}[kind]
		if len(s.Schemes) != 1 || s.Schemes[want] == 0 {
			t.Errorf("the %s server took %v", kind, s.Schemes)
		}
		if s.Accounts["alice"] == 0 || s.Accounts["bob"] == 0 {
			t.Errorf("the %s server saw the accounts %v", kind, s.Accounts)
		}
	}

	// Canaries: nothing Plexus holds for a login shows anywhere else.
	secrets, _ := oauthLogins(t, e.Home)
	var canaries []string
	for _, c := range secrets {
		canaries = append(canaries, c[1])
	}
	_, refresh := oauthLogins(t, e.Home)
	for _, r := range refresh {
		canaries = append(canaries, r)
	}
	canaries = append(canaries, accessTokens(t, e.Home)...)
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	shown := map[string]string{
		"status": e.MustRun("status", "--json"), "ls": e.MustRun("ls", "--json"), "logs.jsonl": string(logs),
		"daemon output": e.DaemonOutput(), "login output": strings.Join(outputs, "\n"),
	}
	for what, text := range shown {
		for _, s := range canaries {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s shows a token or a client secret", what)
			}
		}
	}
}

// browserLoginOf logs c in through `plexus login` and the headless
// browser, and returns what the command printed.
func browserLoginOf(t *testing.T, e *testenv.Env, b *chromium, record string, c oidcCheck) string {
	t.Helper()
	os.Remove(record)
	got := make(chan browserLogin, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			data, _ := os.ReadFile(record)
			if u := strings.TrimSpace(string(data)); u != "" {
				os.Remove(record)
				got <- b.login(t, u, c.user, false)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		got <- browserLogin{Error: "the daemon opened no browser"}
	}()
	r := e.Run("", "login", c.name)
	bl := <-got
	if !bl.OK || r.Code != 0 {
		t.Fatalf("%s: browser login as %s: exit %d\n%s\n%s\nbrowser: %+v", c.name, c.user, r.Code, r.Stdout, r.Stderr, bl)
	}
	mustContain(t, "login", r.Stdout, "logged in to "+c.name+" (ready")
	mustContain(t, "the browser's page", bl.Text, "Plexus is logged in to "+c.name)
	return r.Stdout + r.Stderr
}

// pasteLoginOf logs c in with `plexus login --no-browser`: the browser is
// elsewhere, and the address it reached is pasted back.
func pasteLoginOf(t *testing.T, e *testenv.Env, b *chromium, c oidcCheck) string {
	t.Helper()
	cmd := exec.Command(e.Bin, "login", c.name, "--no-browser")
	cmd.Env = append(os.Environ(), append([]string{"PLEXUS_HOME=" + e.Home}, e.ExtraEnv...)...)
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	authURL := ""
	sc := bufio.NewScanner(stderr)
	for authURL == "" && sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "http"); ok && strings.Contains(u, "client_id=") {
			authURL = "http" + u
		}
	}
	if authURL == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: login --no-browser printed no URL:\n%s", c.name, said.String())
	}
	bl := b.login(t, authURL, c.user, true)
	if !bl.OK || !strings.Contains(bl.URL, "code=") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: the browser as %s: %+v", c.name, c.user, bl)
	}
	fmt.Fprintln(stdin, bl.URL)
	rest, _ := io.ReadAll(stderr)
	said.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: pasted login as %s: %v\n%s\n%s", c.name, c.user, err, stdout.String(), said.String())
	}
	mustContain(t, "pasted login", stdout.String(), "logged in to "+c.name+" (ready")
	return stdout.String() + said.String()
}

// twoAgents calls c's server from two agents (two `plexus mcp` bridges) at
// once: both reach it with the one login.
func twoAgents(t *testing.T, e *testenv.Env, c oidcCheck) {
	t.Helper()
	tool := toolOf(t, e, c.name, "whoami")
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Go(func() {
			cmd := exec.Command(e.Bin, "mcp")
			cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("agent-%d", i), Version: "1"}, nil).Connect(ctx, testenv.Transport(t, cmd), nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "account "+c.user) {
					errs <- fmt.Errorf("agent %d: %+v %v", i, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%s: two agents on one login: %v", c.name, err)
	}
}

// refreshedUnused waits for name's token to be renewed before it expires,
// with nothing using it.
func refreshedUnused(t *testing.T, e *testenv.Env, name string, ttl time.Duration) {
	t.Helper()
	first := servers(t, e)[name].Auth.ExpiresAt
	if first == nil {
		t.Fatalf("%s: no expiry in the status", name)
	}
	deadline := time.Now().Add(ttl + 5*time.Second)
	for {
		st := servers(t, e)[name]
		if now := st.Auth.ExpiresAt; now != nil && now.After(*first) {
			if time.Now().After(*first) {
				t.Errorf("%s: renewed at %v, after its token expired at %v", name, time.Now(), *first)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the token expiring at %v was not renewed: %s %+v", name, *first, st.State, st.Auth)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// whoami calls the server's whoami tool and returns what it answered.
func whoami(t *testing.T, e *testenv.Env, server string) string {
	t.Helper()
	return e.MustRun("call", toolOf(t, e, server, "whoami"), `{}`)
}

// lineOf is the line of table that starts with name.
func lineOf(table, name string) string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

// oauthLogins reads oauth.json: each server's client id and secret, and
// its refresh token.
func oauthLogins(t *testing.T, home string) (clients map[string][2]string, refresh map[string]string) {
	t.Helper()
	var f struct {
		Logins map[string]struct {
			Client struct{ ID, Secret string }
			Token  *struct{ Access, Refresh string }
		}
	}
	readJSONFile(t, filepath.Join(home, "oauth.json"), &f)
	clients, refresh = map[string][2]string{}, map[string]string{}
	for name, l := range f.Logins {
		clients[name] = [2]string{l.Client.ID, l.Client.Secret}
		if l.Token != nil {
			refresh[name] = l.Token.Refresh
		}
	}
	return clients, refresh
}

// accessTokens lists the access tokens oauth.json holds.
func accessTokens(t *testing.T, home string) []string {
	t.Helper()
	var f struct {
		Logins map[string]struct{ Token *struct{ Access string } }
	}
	readJSONFile(t, filepath.Join(home, "oauth.json"), &f)
	var out []string
	for _, l := range f.Logins {
		if l.Token != nil {
			out = append(out, l.Token.Access)
		}
	}
	return out
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}
