// Package authserver is an OAuth 2.1 authorization server for tests, with an
// MCP server it protects, both real HTTP on 127.0.0.1: discovery documents
// (RFC 9728, RFC 8414), dynamic registration (RFC 7591), client ID metadata
// documents, pre-registered clients, the authorization code flow with PKCE
// S256, refresh with rotation (a spent refresh token is revoked),
// expiry, revocation, and step-up (a tool that needs a scope answers 403
// insufficient_scope), the client credentials grant (client secret or
// private_key_jwt), the JWT bearer grant of a workload, and DPoP (RFC 9449)
// with nonces at both the token and the MCP endpoint; and a team's identity
// provider, signing JWT access tokens with a key it can rotate and publishing
// its keys at jwks_uri (idp.go). Options make it misbehave: no PKCE advertisement, a
// wrong iss, a malicious authorization endpoint.
//
// /authorize approves at once: it redirects to redirect_uri with the code,
// as a browser would after a person said yes.
package authserver

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server. The zero value is a well-behaved server with
// dynamic registration.
type Options struct {
	NoPKCE       bool // do not advertise code_challenge_methods_supported
	IssSupported bool // advertise and send iss (RFC 9207)
	WrongIss     bool // send an iss that is not the issuer
	NoDCR        bool // no registration_endpoint
	CIMD         bool // advertise client_id_metadata_document_supported
	// Clients are pre-registered clients: id → secret.
	Clients map[string]string
	// AccessTTL is the access tokens' lifetime; default 1 h.
	AccessTTL time.Duration
	// AuthorizationEndpoint, if set, replaces the advertised one.
	AuthorizationEndpoint string
	// Scopes advertised in scopes_supported of the resource metadata.
	Scopes []string
	// AdminScope is the scope the "admin" tool needs; default "admin".
	AdminScope string
	// ClientCredentials accepts the client_credentials grant of the
	// pre-registered Clients and of ClientKeys.
	ClientCredentials bool
	// ClientKeys are clients that authenticate with private_key_jwt:
	// id → public key.
	ClientKeys map[string]crypto.PublicKey
	// WorkloadKey, if set, accepts the JWT bearer grant of JWTs it signed.
	WorkloadKey crypto.PublicKey
	// DPoP advertises ES256 DPoP, binds tokens to the proof's key, and
	// makes the MCP endpoint require the DPoP scheme with a proof, as its
	// metadata says (dpop_bound_access_tokens_required) and its challenge
	// (DPoP algs="ES256"); DPoPNonce also makes both require the server's
	// nonce.
	DPoP, DPoPNonce bool
	// BearerOnly makes the MCP endpoint take the Bearer scheme only, as
	// the TypeScript SDK's requireBearerAuth does: a DPoP-bound token (in
	// either scheme) is refused with a Bearer challenge, and its metadata
	// says nothing of DPoP, unless ClaimsDPoP says it takes DPoP anyway
	// (a server whose metadata is wrong).
	BearerOnly, ClaimsDPoP bool
	// RequiresDPoP makes the MCP endpoint's metadata say it requires
	// DPoP-bound tokens (without DPoP: tokens this server cannot issue).
	RequiresDPoP bool
	// NoRefreshToken issues no refresh tokens.
	NoRefreshToken bool
	// RefuseTokens makes the MCP endpoint refuse every token (401
	// invalid_token), as a server behind another authorization server
	// than it names would.
	RefuseTokens bool
	// RevokeOnReuse takes a second use of a refresh token for a replay,
	// as oidc-provider does with rotation: every token of that client is
	// revoked.
	RevokeOnReuse bool
	// JWTSubject, if set, makes the access tokens /token issues JWTs of
	// this user, for the resource asked for, signed as AccessJWT signs
	// (the server as a team's identity provider, for a real client's
	// login).
	JWTSubject string
}

// Server is the running pair.
type Server struct {
	URL    string // origin, http://127.0.0.1:P, the issuer
	MCPURL string // the protected MCP endpoint
	opts   Options

	// Counters.
	Refreshes     atomic.Int64
	Registrations atomic.Int64
	Codes         atomic.Int64 // code exchanges
	// Machine grants answered, and token requests of any kind.
	ClientCredentials, JWTBearers, TokenRequests atomic.Int64
	JWKSFetches                                  atomic.Int64 // of /jwks (idp.go)
	// Replays counts refresh tokens used a second time.
	Replays atomic.Int64

	mu       sync.Mutex
	clients  map[string]string    // id → secret ("" for public)
	redirect map[string][]string  // id → registered redirect URIs
	codes    map[string]codeGrant // guarded by mu
	access   map[string]grant     // access token → grant
	refresh  map[string]grant     // live refresh tokens
	spent    map[string]string    // spent refresh token → its client
	lastReg  map[string]any       // the last registration request
	last     url.Values           // the last authorization request
	lastTok  url.Values           // the last token request
	authHdr  []string             // Authorization headers seen at /mcp
	jtis     map[string]bool      // DPoP proofs seen
	nonce    string               // the current DPoP nonce
	nonceAt  time.Time
	keys     []idpKey // signing keys of AccessJWT, the last the current one
	calls    []Call   // tools/call requests /mcp let through
}

// Call is a tools/call the protected MCP endpoint let through: the
// Authorization it came with, the tool and its "text" argument.
type Call struct {
	Authorization, Tool, Text string
}

// Calls lists the tools/call requests /mcp let through, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

type codeGrant struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

type grant struct {
	jkt      string // the DPoP key's thumbprint the token is bound to
	client   string
	scopes   []string
	resource string
	expires  time.Time
}

// Start runs a server until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.AccessTTL == 0 {
		opts.AccessTTL = time.Hour
	}
	if opts.AdminScope == "" {
		opts.AdminScope = "admin"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(), opts: opts,
		clients: map[string]string{}, redirect: map[string][]string{},
		codes: map[string]codeGrant{}, access: map[string]grant{}, refresh: map[string]grant{}, spent: map[string]string{},
		jtis: map[string]bool{}, keys: []idpKey{newIDPKey(1)},
	}
	s.MCPURL = s.URL + "/mcp"
	for id, sec := range opts.Clients {
		s.clients[id] = sec
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.asm)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /jwks", s.jwks)
	mux.Handle("/mcp", s.protect(mcpHandler(opts.AdminScope)))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return s
}

func mcpHandler(adminScope string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "admin", Description: "needs the " + adminScope + " scope"}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "admin ok"}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

func (s *Server) prm(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{"resource": s.MCPURL, "authorization_servers": []string{s.URL}}
	if len(s.opts.Scopes) > 0 {
		m["scopes_supported"] = s.opts.Scopes
	}
	if s.opts.DPoP && !s.opts.BearerOnly || s.opts.ClaimsDPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if s.opts.DPoP && !s.opts.BearerOnly || s.opts.RequiresDPoP {
		m["dpop_bound_access_tokens_required"] = true
	}
	writeJSON(w, 200, m)
}

// requiresDPoP: the MCP endpoint takes DPoP-bound tokens only.
func (s *Server) requiresDPoP() bool { return s.opts.DPoP && !s.opts.BearerOnly }

func (s *Server) asm(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                s.URL,
		"authorization_endpoint":                s.URL + "/authorize",
		"token_endpoint":                        s.URL + "/token",
		"jwks_uri":                              s.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"scopes_supported":                      append(slices.Clone(s.opts.Scopes), "offline_access"),
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic", "none"},
	}
	if s.opts.AuthorizationEndpoint != "" {
		m["authorization_endpoint"] = s.opts.AuthorizationEndpoint
	}
	if !s.opts.NoPKCE {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !s.opts.NoDCR {
		m["registration_endpoint"] = s.URL + "/register"
	}
	if s.opts.CIMD {
		m["client_id_metadata_document_supported"] = true
	}
	if s.opts.IssSupported {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if s.opts.ClientCredentials {
		m["grant_types_supported"] = append(m["grant_types_supported"].([]string), "client_credentials")
		m["token_endpoint_auth_methods_supported"] = append(m["token_endpoint_auth_methods_supported"].([]string), "private_key_jwt")
	}
	if s.opts.WorkloadKey != nil {
		m["grant_types_supported"] = append(m["grant_types_supported"].([]string), "urn:ietf:params:oauth:grant-type:jwt-bearer")
	}
	writeJSON(w, 200, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs    []string `json:"redirect_uris"`
		ApplicationType string   `json:"application_type"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil || len(req.RedirectURIs) == 0 {
		oauthError(w, 400, "invalid_client_metadata")
		return
	}
	var all map[string]any
	json.Unmarshal(body, &all)
	s.mu.Lock()
	s.lastReg = all
	s.mu.Unlock()
	if req.ApplicationType != "native" {
		oauthError(w, 400, "invalid_client_metadata")
		return
	}
	s.Registrations.Add(1)
	id, secret := "dyn-"+rand.Text()[:10], "sec-"+rand.Text()
	s.mu.Lock()
	s.clients[id] = secret
	s.redirect[id] = req.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, 201, map[string]any{"client_id": id, "client_secret": secret, "redirect_uris": req.RedirectURIs,
		"token_endpoint_auth_method": "client_secret_basic"})
}

func (s *Server) knownClient(id string) bool {
	if s.opts.CIMD && strings.HasPrefix(id, "https://") {
		return true
	}
	_, ok := s.clients[id]
	return ok
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = q
	id := q.Get("client_id")
	if !s.knownClient(id) || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	ru := q.Get("redirect_uri")
	if reg, ok := s.redirect[id]; ok && !slices.Contains(reg, ru) {
		http.Error(w, "redirect_uri not registered", 400)
		return
	}
	code := "code-" + rand.Text()
	s.codes[code] = codeGrant{client: id, redirect: ru, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
	to, err := url.Parse(ru)
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	rq := to.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	if s.opts.IssSupported || s.opts.WrongIss {
		iss := s.URL
		if s.opts.WrongIss {
			iss = "https://evil.example"
		}
		rq.Set("iss", iss)
	}
	to.RawQuery = rq.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// clientAuth checks the client's authentication at the token endpoint.
func (s *Server) clientAuth(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if s.opts.CIMD && strings.HasPrefix(id, "https://") {
		return id, true
	}
	if r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		key, ok := s.opts.ClientKeys[id]
		if !ok {
			return id, false
		}
		c, err := checkAssertion(r.PostForm.Get("client_assertion"), key, s.URL)
		return id, err == nil && c["iss"] == id && c["sub"] == id
	}
	if s.opts.WorkloadKey != nil && secret == "" && r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return id, true // a public workload client: the assertion is the credential
	}
	want, ok := s.clients[id]
	return id, ok && want == secret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request")
		return
	}
	s.TokenRequests.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastTok = r.PostForm
	var jkt string
	if s.opts.DPoP {
		s.rotateNonceLocked()
		w.Header().Set("DPoP-Nonce", s.nonce)
		if r.Header.Get("DPoP") != "" {
			var code string
			if jkt, code = s.checkProof(r, s.URL+"/token", ""); code != "" {
				oauthError(w, 400, code)
				return
			}
		}
	}
	id, ok := s.clientAuth(r)
	if !ok {
		oauthError(w, 401, "invalid_client")
		return
	}
	var g grant
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || c.client != id || c.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || c.resource != r.PostForm.Get("resource") {
			oauthError(w, 400, "invalid_grant")
			return
		}
		s.Codes.Add(1)
		g = grant{client: id, scopes: c.scopes, resource: c.resource}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		old, ok := s.refresh[rt]
		if client, reused := s.spent[rt]; reused && client == id {
			s.Replays.Add(1)
			if s.opts.RevokeOnReuse {
				s.revokeClientLocked(id)
			}
		}
		if !ok || old.client != id {
			oauthError(w, 400, "invalid_grant")
			return
		}
		// RFC 9449 §5: only a public client's refresh token is bound to its
		// DPoP key (a confidential client authenticates instead).
		if old.jkt != "" && s.clients[id] == "" && old.jkt != jkt {
			oauthError(w, 400, "invalid_grant")
			return
		}
		delete(s.refresh, rt) // rotation: a refresh token is spent once
		s.spent[rt] = id
		s.Refreshes.Add(1)
		g = old
	default:
		var code string
		if g, code = s.machineGrant(r, id); code != "" {
			oauthError(w, 400, code)
			return
		}
	}
	g.jkt = jkt
	g.expires = time.Now().Add(s.opts.AccessTTL)
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	if s.opts.JWTSubject != "" {
		at = s.signLocked(s.opts.JWTSubject, g.resource, s.opts.AccessTTL, nil)
	}
	s.access[at] = g
	s.refresh[rt] = g
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	ans := map[string]any{"access_token": at, "token_type": typ, "refresh_token": rt,
		"expires_in": int(s.opts.AccessTTL.Seconds()), "scope": strings.Join(g.scopes, " ")}
	if s.opts.NoRefreshToken || r.PostForm.Get("grant_type") != "authorization_code" && r.PostForm.Get("grant_type") != "refresh_token" {
		delete(ans, "refresh_token") // RFC 6749 §4.4.3: none for client credentials
		delete(s.refresh, rt)
	}
	writeJSON(w, 200, ans)
}

// protect is the token check in front of the MCP handler; the admin tool
// needs AdminScope.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := fmt.Sprintf(`resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.URL)
		challenge := "Bearer " + prm
		if s.requiresDPoP() {
			challenge = `DPoP algs="ES256", ` + prm
		}
		h := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if dtok, dpop := strings.CutPrefix(h, "DPoP "); dpop {
			tok, ok = dtok, true
		}
		s.mu.Lock()
		s.authHdr = append(s.authHdr, h)
		g, live := s.access[tok]
		proofErr := ""
		switch {
		case s.opts.BearerOnly && ok && (!strings.HasPrefix(h, "Bearer ") || live && g.jkt != ""):
			// requireBearerAuth: another scheme, or a bound token it
			// cannot check, is an invalid token.
			proofErr = "bearer"
		case ok && live && g.jkt != "":
			// A bound token: the DPoP scheme, and a proof by its key.
			s.rotateNonceLocked()
			w.Header().Set("DPoP-Nonce", s.nonce)
			jkt, code := s.checkProof(r, s.MCPURL, tok)
			switch {
			case !strings.HasPrefix(h, "DPoP "):
				proofErr = "invalid_token"
			case code != "":
				proofErr = code
			case jkt != g.jkt:
				proofErr = "invalid_dpop_proof"
			}
		case ok && live && s.requiresDPoP():
			proofErr = "invalid_token" // a bearer token where DPoP is required
		}
		s.mu.Unlock()
		if proofErr == "bearer" {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="expected Bearer TOKEN", `+prm)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if proofErr != "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP algs="ES256", error="%s", %s`, proofErr, prm))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if !ok || !live || time.Now().After(g.expires) || g.resource != s.MCPURL || s.opts.RefuseTokens {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			tool, text, err := peekCall(r)
			if err == nil && tool == "admin" && !slices.Contains(g.scopes, s.opts.AdminScope) {
				w.Header().Set("WWW-Authenticate", challenge+fmt.Sprintf(`, error="insufficient_scope", scope="%s"`, s.opts.AdminScope))
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
			if err == nil && tool != "" {
				s.mu.Lock()
				s.calls = append(s.calls, Call{Authorization: h, Tool: tool, Text: text})
				s.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Revoke revokes every token issued so far.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]grant{}
	s.refresh = map[string]grant{}
}

// revokeClientLocked revokes every token of client (a replayed refresh
// token). s.mu is held.
func (s *Server) revokeClientLocked(client string) {
	for k, g := range s.access {
		if g.client == client {
			delete(s.access, k)
		}
	}
	for k, g := range s.refresh {
		if g.client == client {
			delete(s.refresh, k)
		}
	}
}

// LastRegistration is the last dynamic registration request, as JSON.
func (s *Server) LastRegistration() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReg
}

// RevokeAccess revokes every access token issued so far, and keeps the
// refresh tokens: a client that refreshes goes on.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]grant{}
}

// ExpireAccess makes every access token issued so far expired.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, g := range s.access {
		g.expires = time.Now().Add(-time.Second)
		s.access[k] = g
	}
}

// LastAuthorization is the query of the last authorization request.
func (s *Server) LastAuthorization() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// LastTokenRequest is the form of the last token request.
func (s *Server) LastTokenRequest() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTok
}

// AuthorizationHeaders lists the Authorization headers /mcp received.
func (s *Server) AuthorizationHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authHdr)
}
