package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// teamEnv is a daemon in team mode: the example server (and what prepare
// adds), external calls on, the team section naming idp as the issuer and
// the daemon's own /mcp as the resource, and the profiles given. It
// returns the daemon's base URL and its loopback token.
func teamEnv(t *testing.T, idp *authserver.Server, team, profiles string, prepare ...func(*testenv.Env)) (*testenv.Env, string, string) {
	t.Helper()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	for _, f := range prepare {
		f(e)
	}
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + st.HTTPAddr
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var prof, tm map[string]any
	if err := json.Unmarshal([]byte(`{`+profiles+`}`), &prof); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"resource": "`+base+`/mcp", "issuers": ["`+idp.URL+`"]`+team+`}`), &tm); err != nil {
		t.Fatal(err)
	}
	m := f["mcp"].(map[string]any)
	m["face"] = map[string]any{"allowExternalCall": true, "allowWrite": true}
	m["profiles"] = prof
	f["team"] = tm
	b, _ = json.MarshalIndent(f, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	return e, base, strings.TrimSpace(string(tok))
}

// teamPost sends one request to the face with the Authorization given.
func teamPost(t *testing.T, url, auth, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const teamInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// teamTools lists a profile's tools as a team member with token sees them.
func teamTools(t *testing.T, url, token string) ([]string, *mcp.ClientSession) {
	t.Helper()
	cs := httpFace(t, url, token, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names, cs
}

// TestTeamIdentity runs the daemon in team mode against a real
// authorization server issuing signed JWTs: the face is a protected
// resource whose metadata names the issuer; a valid token lists and calls
// the profile's tools; bad tokens and the loopback token are refused; a
// profile's users and groups decide who may use it; the caller's user is
// in the call log and the metrics, and no token is anywhere.
func TestTeamIdentity(t *testing.T) {
	t.Parallel()
	idp := authserver.Start(t, authserver.Options{})
	e, base, loopToken := teamEnv(t, idp, `, "userClaim": "email"`,
		`"default": {"servers": ["example"], "users": ["ada@example.com", "carol@example.com"]},
		 "ops": {"servers": ["example"], "groups": ["ops"], "controlTools": true}`)
	resource := base + "/mcp"
	mint := func(email string, groups ...string) string {
		extra := map[string]any{"email": email}
		if groups != nil {
			extra["groups"] = groups
		}
		return idp.AccessJWT("sub-"+email, resource, 5*time.Minute, extra)
	}
	ada, bob, carol, opsBob := mint("ada@example.com"), mint("bob@example.com"), mint("carol@example.com"), mint("bob@example.com", "ops")
	fetchesAtStart := time.Now()

	// No token: 401 pointing at the metadata, and the metadata is right.
	status, hdr, _ := teamPost(t, resource, "", teamInit)
	metaURL := base + "/.well-known/oauth-protected-resource/mcp"
	if status != 401 || hdr.Get("WWW-Authenticate") != `Bearer resource_metadata="`+metaURL+`"` {
		t.Fatalf("no token: %d %q", status, hdr.Get("WWW-Authenticate"))
	}
	resp, err := http.Get(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource string   `json:"resource"`
		AS       []string `json:"authorization_servers"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if resp.StatusCode != 200 || doc.Resource != resource || !slices.Equal(doc.AS, []string{idp.URL}) {
		t.Fatalf("metadata: %d %+v", resp.StatusCode, doc)
	}

	// A member of the profile lists its tools and calls one; Plexus's
	// control-plane tools are not offered in team mode unless asked for.
	names, cs := teamTools(t, resource, ada)
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "_echo") }) || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "plexus_") }) {
		t.Fatalf("ada's tools: %v", names)
	}
	echo := names[slices.IndexFunc(names, func(n string) bool { return strings.HasSuffix(n, "_echo") })]
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi from ada"}})
	if got := textOfResult(t, res, err); got != "hi from ada" {
		t.Fatalf("ada's call: %q", got)
	}
	// With a progress token the call takes the SDK's path, not the frame's.
	progress := &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "with progress"}}
	progress.SetProgressToken("p1")
	res, err = cs.CallTool(t.Context(), progress)
	if got := textOfResult(t, res, err); got != "with progress" {
		t.Fatalf("ada's call with progress: %q", got)
	}

	// A user outside the profile: 403, no tools. In the ops group, /mcp/ops.
	status, _, body := teamPost(t, resource, "Bearer "+bob, teamInit)
	if status != 403 || strings.Contains(body, "_echo") {
		t.Errorf("bob at /mcp: %d %s", status, body)
	}
	status, _, _ = teamPost(t, base+"/mcp/ops", "Bearer "+bob, teamInit)
	if status != 403 {
		t.Errorf("bob (no groups) at /mcp/ops: %d", status)
	}
	opsNames, _ := teamTools(t, base+"/mcp/ops", opsBob)
	if !slices.Contains(opsNames, "plexus_status") || slices.Contains(opsNames, "plexus_add_server") {
		t.Errorf("bob in ops at /mcp/ops: %v (control tools asked for, writes never in team mode)", opsNames)
	}
	if status, _, _ := teamPost(t, resource, "Bearer "+opsBob, teamInit); status != 403 {
		t.Errorf("bob in ops at /mcp: %d", status)
	}

	// A settings round trip through the API keeps the gates.
	c := client.New(e.Home)
	set, err := c.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(set.Profiles["default"].Users, []string{"ada@example.com", "carol@example.com"}) || !slices.Equal(set.Profiles["ops"].Groups, []string{"ops"}) {
		t.Fatalf("settings show profiles %+v", set.Profiles)
	}
	set.CallTimeoutMs = 45000
	if _, err := c.SetSettings(t.Context(), *set, set.Revision); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := teamPost(t, resource, "Bearer "+bob, teamInit); status != 403 {
		t.Errorf("bob at /mcp after a settings save: %d", status)
	}

	// Another member cannot use ada's session, on either call path.
	sid := ""
	status, hdr, _ = teamPost(t, resource, "Bearer "+ada, teamInit)
	if sid = hdr.Get("Mcp-Session-Id"); status != 200 || sid == "" {
		t.Fatalf("ada's initialize: %d, session %q", status, sid)
	}
	teamPost(t, resource, "Bearer "+ada, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"stolen"}}}`
	status, _, body = teamPost(t, resource, "Bearer "+carol, call, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25")
	if status != 403 || strings.Contains(body, "stolen") {
		t.Errorf("carol on ada's session: %d %s", status, body)
	}
	if status, _, body = teamPost(t, resource, "Bearer "+ada, call, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"); status != 200 || !strings.Contains(body, "stolen") {
		t.Errorf("ada on her own session: %d %s", status, body)
	}

	// Bad tokens, and the one-machine token, are refused with invalid_token.
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	adaClaims := map[string]any{"iss": idp.URL, "sub": "sub-ada", "email": "ada@example.com", "aud": resource, "exp": time.Now().Add(time.Minute).Unix()}
	jwks, err := http.Get(idp.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	publicKeys, _ := io.ReadAll(jwks.Body)
	jwks.Body.Close()
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: publicKeys}, (&jose.SignerOptions{}).WithHeader("kid", "key-1"))
	payload, _ := json.Marshal(adaClaims)
	hsObj, _ := hs.Sign(payload)
	hsTok, _ := hsObj.CompactSerialize()
	for name, tok := range map[string]string{
		"unknown kid":             authserver.SignJWT(stranger, "made-up", adaClaims),
		"HS256 keyed by the JWKS": hsTok,
		"expired":                 idp.AccessJWT("sub-ada", resource, -5*time.Minute, map[string]any{"email": "ada@example.com"}),
		"wrong audience":          idp.AccessJWT("sub-ada", "http://127.0.0.1:1/mcp", time.Minute, map[string]any{"email": "ada@example.com"}),
		"wrong issuer":            authserver.Start(t, authserver.Options{}).AccessJWT("sub-ada", resource, time.Minute, map[string]any{"email": "ada@example.com"}),
		"alg none":                strings.Join([]string{segmentOf(map[string]string{"alg": "none", "kid": "key-1"}), strings.Split(ada, ".")[1], ""}, "."),
		"loopback token":          loopToken,
	} {
		status, hdr, _ := teamPost(t, resource, "Bearer "+tok, teamInit)
		if status != 401 || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %q", name, status, hdr.Get("WWW-Authenticate"))
		}
	}

	// A rotated key: its tokens are taken once the key set may be read
	// again (at most every 10 s), and asking every half second until then
	// does not read it more often.
	idp.RotateKey()
	rotated := mint("ada@example.com")
	deadline := time.Now().Add(25 * time.Second)
	for {
		status, _, body := teamPost(t, resource, "Bearer "+rotated, teamInit)
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token of the rotated key is still refused: %d %s", status, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The daemon's first read, this test's own, and one per 10 s since.
	if n := idp.JWKSFetches.Load(); n > 2+int64(time.Since(fetchesAtStart)/(10*time.Second)) {
		t.Errorf("the key set was read %d times in %s", n, time.Since(fetchesAtStart).Round(time.Second))
	}

	// The call log and the metrics name the user; no token is anywhere.
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	if !strings.Contains(string(logs), `"msg":"call","user":"ada@example.com"`) {
		t.Errorf("no call log line names ada:\n%s", logs)
	}
	metrics := scrape(t, base, loopToken)
	// ada made three calls (frame path, SDK path, her raw session's).
	if !strings.Contains(metrics, `plexus_user_calls_total{outcome="ok",server="example",user="ada@example.com"} 3`+"\n") {
		t.Errorf("no user call metric for ada:\n%s", metrics)
	}
	status2 := e.MustRun("status", "--json")
	outputs := string(logs) + e.DaemonOutput() + status2 + metrics
	for _, tok := range []string{ada, bob, carol, opsBob, rotated} {
		sig := tok[strings.LastIndex(tok, ".")+1:]
		if strings.Contains(outputs, sig) {
			t.Errorf("a token's signature is in the logs, status or metrics")
		}
	}
}

func segmentOf(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimRight(base64URL(b), "=")
}

func base64URL(b []byte) string { return base64.URLEncoding.EncodeToString(b) }
