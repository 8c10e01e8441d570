package teamauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

const resourceURL = "https://plexus.example.com/mcp"

// guarded runs a Resource for issuer idp in front of a handler that
// answers with the caller it was given, on real HTTP.
func guarded(t *testing.T, idp *authserver.Server, team config.Team, o Options) (*Resource, *httptest.Server) {
	t.Helper()
	if team.Resource == "" {
		team.Resource = resourceURL
	}
	if team.Issuers == nil {
		team.Issuers = []string{idp.URL}
	}
	if err := config.Validate(&config.File{Team: &team}); err != nil {
		t.Fatal(err)
	}
	r := New(&team, o)
	mux := http.NewServeMux()
	mux.Handle(MetadataPath+"/", http.HandlerFunc(r.ServeMetadata))
	mux.Handle("/mcp", r.Guard(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, ok := caller.From(req.Context())
		if !ok {
			t.Error("a request passed the guard without its caller")
		}
		json.NewEncoder(w).Encode(id)
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return r, srv
}

type answer struct {
	status    int
	challenge string
	body      string
}

func call(t *testing.T, srv *httptest.Server, token string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)}
}

func segment(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestGuardRefusesWhatItMust(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	other := authserver.Start(t, authserver.Options{})
	_, srv := guarded(t, idp, config.Team{}, Options{MinRefresh: time.Hour})
	meta := `resource_metadata="https://plexus.example.com/.well-known/oauth-protected-resource/mcp"`

	good := idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"groups": []string{"eng"}})
	if a := call(t, srv, good); a.status != 200 || !strings.Contains(a.body, `"User":"ada"`) || !strings.Contains(a.body, `"eng"`) {
		t.Fatalf("a good token: %d %s", a.status, a.body)
	}

	// Tokens made by hand from the good one's parts.
	parts := strings.Split(good, ".")
	claims := map[string]any{"iss": idp.URL, "sub": "ada", "aud": resourceURL, "exp": time.Now().Add(time.Minute).Unix()}
	none := segment(map[string]string{"alg": "none", "kid": "key-1"}) + "." + segment(claims) + "."
	// HS256 keyed with the issuer's public key, which anyone can read.
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	resp, err := http.Get(idp.URL + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&set)
	resp.Body.Close()
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(set.Keys[0])},
		(&jose.SignerOptions{}).WithHeader("kid", "key-1"))
	payload, _ := json.Marshal(claims)
	hsObj, _ := hs.Sign(payload)
	hsTok, _ := hsObj.CompactSerialize()
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

	for _, tt := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "", 401, ""},
		{"not a JWT", "opaque-token", 401, "invalid_token"},
		{"expired", idp.AccessJWT("ada", resourceURL, -2*time.Minute, nil), 401, "invalid_token"},
		{"not yet valid", idp.AccessJWT("ada", resourceURL, time.Hour, map[string]any{"nbf": time.Now().Add(10 * time.Minute).Unix()}), 401, "invalid_token"},
		{"no exp", idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"exp": nil}), 401, "invalid_token"},
		{"exp not a number", idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"exp": "tomorrow"}), 401, "invalid_token"},
		{"wrong audience", idp.AccessJWT("ada", "https://other.example.com/mcp", time.Minute, nil), 401, "invalid_token"},
		{"no audience", idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"aud": nil}), 401, "invalid_token"},
		{"issuer not configured", other.AccessJWT("ada", resourceURL, time.Minute, nil), 401, "invalid_token"},
		{"iss claimed, signed by another", authserver.SignJWT(stranger, "key-1", claims), 401, "invalid_token"},
		{"unknown kid", authserver.SignJWT(stranger, "made-up", claims), 401, "invalid_token"},
		{"alg none", none, 401, "invalid_token"},
		{"HS256 with the public key", hsTok, 401, "invalid_token"},
		{"signature cut", parts[0] + "." + parts[1] + ".", 401, "invalid_token"},
		{"claims swapped", parts[0] + "." + segment(map[string]any{"iss": idp.URL, "sub": "root", "aud": resourceURL, "exp": time.Now().Add(time.Hour).Unix()}) + "." + parts[2], 401, "invalid_token"},
		{"no user", idp.AccessJWT("", resourceURL, time.Minute, map[string]any{"sub": nil}), 401, "invalid_token"},
		{"a user name with a line break", idp.AccessJWT("ada\nlevel=ERROR", resourceURL, time.Minute, nil), 401, "invalid_token"},
		{"a user name of a kilobyte", idp.AccessJWT(strings.Repeat("a", 1024), resourceURL, time.Minute, nil), 401, "invalid_token"},
	} {
		a := call(t, srv, tt.token)
		if a.status != tt.status || !strings.HasPrefix(a.challenge, "Bearer ") || !strings.Contains(a.challenge, meta) {
			t.Errorf("%s: %d %q, want %d with the metadata pointer", tt.name, a.status, a.challenge, tt.status)
		}
		if got := strings.Contains(a.challenge, `error="`+tt.code+`"`); tt.code != "" && !got || tt.code == "" && strings.Contains(a.challenge, "error=") {
			t.Errorf("%s: challenge %q, want error %q", tt.name, a.challenge, tt.code)
		}
		if tt.token != "" && len(tt.token) > 20 && strings.Contains(a.body+a.challenge, tt.token[len(tt.token)-20:]) {
			t.Errorf("%s: the answer quotes the token", tt.name)
		}
	}
	if n := idp.JWKSFetches.Load(); n > 2 { // the first token's, and the test's own read
		t.Errorf("the key set was fetched %d times: unknown kids are not rate-bounded", n)
	}
}

func TestGuardRequiresScopes(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	_, srv := guarded(t, idp, config.Team{Scopes: []string{"mcp", "tools"}}, Options{})
	a := call(t, srv, idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"scope": "mcp"}))
	if a.status != 403 || !strings.Contains(a.challenge, `error="insufficient_scope"`) || !strings.Contains(a.challenge, `scope="mcp tools"`) {
		t.Errorf("one scope short: %d %q", a.status, a.challenge)
	}
	if a := call(t, srv, idp.AccessJWT("ada", resourceURL, time.Minute, map[string]any{"scp": []string{"tools", "mcp"}})); a.status != 200 {
		t.Errorf("both scopes (scp): %d %s", a.status, a.body)
	}
	if a := call(t, srv, ""); a.status != 401 || !strings.Contains(a.challenge, `scope="mcp tools"`) {
		t.Errorf("no token: %d %q, want the scopes named", a.status, a.challenge)
	}
}

func TestGuardClaimsAndOrigin(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	_, srv := guarded(t, idp, config.Team{UserClaim: "email", GroupsClaim: "roles"}, Options{})
	tok := idp.AccessJWT("u-1", resourceURL, time.Minute, map[string]any{"email": "ada@example.com", "roles": "eng", "aud": []string{"x", resourceURL}})
	if a := call(t, srv, tok); a.status != 200 || !strings.Contains(a.body, `"User":"ada@example.com"`) || !strings.Contains(a.body, `"Subject":"u-1"`) || !strings.Contains(a.body, `["eng"]`) {
		t.Errorf("email and roles: %d %s", a.status, a.body)
	}
	if a := call(t, srv, idp.AccessJWT("u-1", resourceURL, time.Minute, nil)); a.status != 401 || !strings.Contains(a.challenge, "team.userClaim") {
		t.Errorf("no email claim: %d %q", a.status, a.challenge)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a foreign Origin: %d, want 403", resp.StatusCode)
	}
}

func TestKeyRotationIsPickedUp(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	// The refresh bound is counted on a clock of the test's, moved past it
	// by hand: a bound on real time would be crossed by a slow machine
	// within the burst below.
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	pass := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	_, srv := guarded(t, idp, config.Team{}, Options{MinRefresh: DefaultMinRefresh, Now: now})
	if a := call(t, srv, idp.AccessJWT("ada", resourceURL, time.Minute, nil)); a.status != 200 {
		t.Fatalf("key-1: %d %s", a.status, a.body)
	}
	idp.RotateKey()
	// Within the bound, an unknown key id does not fetch the key set.
	if a := call(t, srv, idp.AccessJWT("ada", resourceURL, time.Minute, nil)); a.status != 401 {
		t.Fatalf("key-2 within the bound: %d, want 401", a.status)
	}
	pass(DefaultMinRefresh + time.Second)
	if a := call(t, srv, idp.AccessJWT("ada", resourceURL, time.Minute, nil)); a.status != 200 {
		t.Fatalf("key-2 after the rotation: %d %s", a.status, a.body)
	}
	if n := idp.JWKSFetches.Load(); n != 2 {
		t.Errorf("key set fetched %d times, want 2 (first use, then the unknown kid)", n)
	}
	// A burst of unknown key ids within the bound fetches once at most.
	pass(DefaultMinRefresh + time.Second)
	stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for i := range 20 {
		call(t, srv, authserver.SignJWT(stranger, "k"+string(rune('a'+i)), map[string]any{"iss": idp.URL, "sub": "x", "aud": resourceURL, "exp": time.Now().Add(time.Minute).Unix()}))
	}
	if n := idp.JWKSFetches.Load(); n != 3 {
		t.Errorf("20 unknown kids fetched the key set %d times in all, want 3", n)
	}
}

func TestMetadataDocument(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	r, srv := guarded(t, idp, config.Team{Scopes: []string{"mcp"}}, Options{})
	if r.MetadataURL() != "https://plexus.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL = %s", r.MetadataURL())
	}
	for _, path := range []string{MetadataPath + "/mcp", MetadataPath + "/mcp/eng"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource string   `json:"resource"`
			AS       []string `json:"authorization_servers"`
			Bearer   []string `json:"bearer_methods_supported"`
			Scopes   []string `json:"scopes_supported"`
		}
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || doc.Resource != resourceURL || len(doc.AS) != 1 || doc.AS[0] != idp.URL ||
			len(doc.Bearer) != 1 || doc.Bearer[0] != "header" || len(doc.Scopes) != 1 {
			t.Errorf("%s: %d %+v", path, resp.StatusCode, doc)
		}
	}
	resp, _ := http.Get(srv.URL + MetadataPath + "/other")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("metadata of another path: %d", resp.StatusCode)
	}
}

func TestUnreachableIssuerIsRefusedNotOpen(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	team := config.Team{Resource: resourceURL, Issuers: []string{gone.URL}}
	gone.Close()
	r := New(&team, Options{})
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tok := authserver.SignJWT(priv, "k", map[string]any{"iss": gone.URL, "sub": "x", "aud": resourceURL, "exp": time.Now().Add(time.Minute).Unix()})
	if _, err := r.check(context.Background(), tok); err == nil {
		t.Fatal("a token was taken while its issuer's keys could not be read")
	}
}

// TestSeenTokenStillExpires: a token taken before is taken again without
// its signature being checked, but never past its exp.
func TestSeenTokenStillExpires(t *testing.T) {
	idp := authserver.Start(t, authserver.Options{})
	var offset time.Duration
	_, srv := guarded(t, idp, config.Team{}, Options{Now: func() time.Time { return time.Now().Add(offset) }})
	tok := idp.AccessJWT("ada", resourceURL, 20*time.Second, nil)
	if a := call(t, srv, tok); a.status != 200 {
		t.Fatalf("a fresh token: %d %s", a.status, a.body)
	}
	fetched := idp.JWKSFetches.Load()
	offset = 10 * time.Second
	if a := call(t, srv, tok); a.status != 200 || idp.JWKSFetches.Load() != fetched {
		t.Fatalf("the token again: %d %s", a.status, a.body)
	}
	// Within the cache's minute, past exp and the skew.
	offset = 20*time.Second + DefaultSkew + 5*time.Second
	if a := call(t, srv, tok); a.status != 401 || !strings.Contains(a.challenge, "expired") {
		t.Errorf("the seen token past its exp: %d %q", a.status, a.challenge)
	}
}
