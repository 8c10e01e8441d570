package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// TestTeamMembersOwnUpstreamLogins: in team mode, a call to a server that
// logs in with OAuth carries the calling member's own token — each member
// logs in for themselves, started by their first call — and never the
// daemon's or another member's. The upstream records the Authorization of
// every call it let through; the tokens appear nowhere else.
func TestTeamMembersOwnUpstreamLogins(t *testing.T) {
	t.Parallel()
	idp := authserver.Start(t, authserver.Options{})
	up := authserver.Start(t, authserver.Options{})
	e, base, _ := teamEnv(t, idp, "", `"default": {"servers": ["remote"], "users": ["sub-ada", "sub-bob"]}`, func(e *testenv.Env) {
		script, record := browser(t)
		e.ExtraEnv = []string{"BROWSER=" + script}
		e.MustRun("add", "remote", up.MCPURL)
		done := approveInBrowser(t, record)
		if r := e.Run("", "login", "remote"); r.Code != 0 {
			t.Fatalf("the operator's login: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		waitState(t, e, "remote", "ready", 20*time.Second)
	})
	resource := base + "/mcp"
	member := func(sub string) *mcp.ClientSession {
		_, cs := teamTools(t, resource, idp.AccessJWT(sub, resource, 10*time.Minute, nil))
		return cs
	}
	ada, bob := member("sub-ada"), member("sub-bob")
	names, _ := teamTools(t, resource, idp.AccessJWT("sub-ada", resource, time.Minute, nil))
	i := slices.IndexFunc(names, func(n string) bool { return strings.Contains(n, "remote_echo") })
	if i < 0 {
		t.Fatalf("no remote echo among %v", names)
	}
	echo := names[i]
	call := func(cs *mcp.ClientSession, text string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": text}})
		if err != nil {
			t.Fatal(err)
		}
		return contentText(res), res.IsError
	}
	loginURL := regexp.MustCompile(`open (\S+) \(valid until`)
	var answers []string
	for _, m := range []struct {
		cs   *mcp.ClientSession
		name string
	}{{ada, "sub-ada"}, {bob, "sub-bob"}} {
		// The first call: not sent, a login started for the member.
		text, isErr := call(m.cs, "before "+m.name+" logged in")
		answers = append(answers, text)
		u := loginURL.FindStringSubmatch(text)
		if !isErr || !strings.Contains(text, m.name+" has not logged in to remote") || u == nil {
			t.Fatalf("%s's first call: error %v, %q", m.name, isErr, text)
		}
		// The browser comes back to the face's own origin, not to a
		// loopback listener of the daemon's machine.
		if au, err := url.Parse(u[1]); err != nil || au.Query().Get("redirect_uri") != base+"/oauth/callback" {
			t.Fatalf("%s's login link returns to %q", m.name, au.Query().Get("redirect_uri"))
		}
		resp, err := http.Get(u[1]) // the member's browser: approved at once, redirected to Plexus
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s's login ended with %d", m.name, resp.StatusCode)
		}
		for _, n := range []int{1, 2} {
			text, isErr := call(m.cs, "from "+m.name)
			answers = append(answers, text)
			if isErr || text != "from "+m.name {
				t.Fatalf("%s's call %d after the login: error %v, %q", m.name, n, isErr, text)
			}
		}
	}

	// A redirect no login waits for is refused.
	resp, err := http.Get(base + "/oauth/callback?state=forged&code=stolen")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a forged redirect: %d, want 400", resp.StatusCode)
	}

	// Each member's calls reached the upstream with that member's token.
	tokens, refresh := loginsOf(t, e)
	if len(tokens) != 3 || tokens["remote"] == "" || tokens["remote\x00sub-ada"] == "" || tokens["remote\x00sub-bob"] == "" {
		t.Fatalf("oauth.json holds %d logins", len(tokens))
	}
	if tokens["remote\x00sub-ada"] == tokens["remote\x00sub-bob"] || tokens["remote"] == tokens["remote\x00sub-ada"] {
		t.Fatal("two logins share a token")
	}
	seen := map[string]int{}
	for _, c := range up.Calls() {
		want := ""
		switch {
		case strings.HasPrefix(c.Text, "before "):
			t.Errorf("a call was sent before its member logged in (with %q)", c.Authorization)
		case c.Text == "from sub-ada":
			want = tokens["remote\x00sub-ada"]
		case c.Text == "from sub-bob":
			want = tokens["remote\x00sub-bob"]
		default:
			continue
		}
		seen[c.Text]++
		if c.Authorization != "Bearer "+want {
			t.Errorf("%q reached the upstream with another token than its member's", c.Text)
		}
	}
	if seen["from sub-ada"] != 2 || seen["from sub-bob"] != 2 {
		t.Errorf("calls seen upstream: %v", seen)
	}

	// Canaries: no member's token in the logs, the status or the answers.
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	outputs := string(logs) + e.DaemonOutput() + e.MustRun("status", "--json") + strings.Join(answers, "\n")
	for account, tok := range tokens {
		if strings.Contains(outputs, tok) || refresh[account] != "" && strings.Contains(outputs, refresh[account]) {
			t.Errorf("a token of %q shows in the logs, status or answers", strings.ReplaceAll(account, "\x00", " as "))
		}
	}
}

// loginsOf reads oauth.json: each login's access and refresh token, by
// its account (the server, or the server and a member).
func loginsOf(t *testing.T, e *testenv.Env) (access, refresh map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.Home, "oauth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Logins map[string]struct {
			Server string
			Token  struct{ Access, Refresh string }
		}
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	access, refresh = map[string]string{}, map[string]string{}
	for _, en := range f.Logins {
		access[en.Server], refresh[en.Server] = en.Token.Access, en.Token.Refresh
	}
	return access, refresh
}

// TestTeamTypeScriptAgent: an agent on the official TypeScript SDK client,
// given nothing but the face's URL, finds the team's authorization server
// through the face's 401 and metadata, logs in there for this resource,
// and lists and calls the profile's tools with the JWT it got.
func TestTeamTypeScriptAgent(t *testing.T) {
	t.Parallel()
	needConformance(t) // the TypeScript peer, as the other tests on it
	idp := authserver.Start(t, authserver.Options{JWTSubject: "ts-agent"})
	_, base, _ := teamEnv(t, idp, "", `"default": {"servers": ["example"], "users": ["ts-agent"]}`)
	lines := runLongSession(t, "teamclient.ts", nil, "--url", base+"/mcp", "--tool", "_echo", "--text", "from the ts agent")
	for _, want := range []string{"ok authorize resource=" + base + "/mcp", "ok login", "ok call from the ts agent"} {
		if !slices.Contains(lines, want) {
			t.Errorf("no %q in %q", want, lines)
		}
	}
}
