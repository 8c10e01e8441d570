package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// LoginParams say what to log in to.
type LoginParams struct {
	Server string // the server's name in Plexus
	URL    string // the MCP endpoint: the protected resource
	// Challenge holds the WWW-Authenticate headers of the answer that asked
	// for authorization, if any.
	Challenge []string
	Manual    *Manual
	// Grant, if set, obtains tokens without a person.
	Grant *Grant
	// RedirectURI is where the browser returns: a loopback listener.
	RedirectURI string
	// MetadataDocumentURL is the https URL of Plexus's client ID metadata
	// document (mcp.oauthClientMetadataUrl), used as the client_id where
	// the authorization server supports it; "" uses the Manager's.
	MetadataDocumentURL string
}

// Pending is a login waiting for the browser's redirect. It holds the PKCE
// verifier and the state: it never leaves the process.
type Pending struct {
	Server      string
	AuthURL     string // the URL a person opens
	RedirectURI string
	Expires     time.Time

	state    string
	verifier string
	e        *entry // without a token yet
}

// begin runs discovery and registration and builds the authorization URL.
func (m *Manager) begin(ctx context.Context, p LoginParams, extraScopes []string) (*Pending, error) {
	md, err := discover(ctx, m.hc, p.URL, parseChallenge(p.Challenge), p.Manual)
	if err != nil {
		return nil, err
	}
	prev := m.entryFor(p.Server)
	cl, err := m.identify(ctx, md, p, prev)
	if err != nil {
		return nil, err
	}
	scopes := md.scopes
	if prev != nil && prev.Issuer == md.issuer {
		// Step-up keeps what was granted before (SEP-2350).
		scopes = union(prev.Scopes, scopes)
	}
	scopes = union(scopes, extraScopes)
	// SEP-2207: a client that stores refresh tokens asks for offline_access
	// where the authorization server offers it. OpenID Connect Core §11:
	// offline access is asked for with prompt=consent (oidc-provider drops
	// offline_access otherwise, and issues no refresh token).
	offline := wantsOffline(md)
	if offline {
		scopes = union(scopes, []string{"offline_access"})
	}
	e := &entry{
		Server:       p.Server,
		Issuer:       md.issuer,
		Resource:     md.resource,
		AuthURL:      md.asm.AuthorizationEndpoint,
		TokenURL:     md.asm.TokenEndpoint,
		IssSupported: md.asm.AuthorizationResponseIssParameterSupported,
		Client:       *cl,
		Scopes:       scopes,
	}
	if e.DPoPKey, err = m.dpopKeyFor(md, prev); err != nil {
		return nil, err
	}
	if prev != nil && prev.Resource == md.resource {
		e.DPoPRefused = prev.DPoPRefused
	}
	pd := &Pending{
		Server:      p.Server,
		RedirectURI: p.RedirectURI,
		Expires:     m.now().Add(m.loginTTL),
		state:       rand.Text(),
		verifier:    oauth2.GenerateVerifier(),
		e:           e,
	}
	au, err := url.Parse(e.AuthURL)
	if err != nil {
		return nil, errors.New("the authorization endpoint is not a valid URL")
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", cl.ID)
	q.Set("redirect_uri", p.RedirectURI)
	q.Set("state", pd.state)
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(pd.verifier))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", md.resource)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	if offline {
		q.Set("prompt", "consent")
	}
	au.RawQuery = q.Encode()
	pd.AuthURL = au.String()
	return pd, nil
}

// identify picks the client identity in the order of R-AUTH-1:
// pre-registered (the server's oauth.clientId) → a client ID metadata
// document (if Plexus has one hosted and the server supports it) → the
// registration kept from before → dynamic registration (RFC 7591).
func (m *Manager) identify(ctx context.Context, md *metadata, p LoginParams, prev *entry) (*client, error) {
	asm := md.asm
	if p.Manual != nil && p.Manual.ClientID != "" {
		c := &client{ID: p.Manual.ClientID, Secret: p.Manual.ClientSecret, Kind: "preregistered", AuthMethod: "none"}
		if c.Secret != "" {
			c.AuthMethod = preferredSecretMethod(asm.TokenEndpointAuthMethodsSupported)
		}
		return c, nil
	}
	doc := p.MetadataDocumentURL
	if doc == "" {
		doc = m.metadataDocumentURL
	}
	if doc != "" && asm.ClientIDMetadataDocumentSupported {
		return &client{ID: doc, Kind: "metadata-document", AuthMethod: "none"}, nil
	}
	scope := md.scopes
	if wantsOffline(md) {
		// oidc-provider, among others, refuses a scope the registration
		// did not name.
		scope = union(scope, []string{"offline_access"})
	}
	regScope := strings.Join(scope, " ")
	if prev != nil && prev.Issuer == md.issuer && prev.Client.Kind == "dynamic" && slices.Contains(prev.Client.RedirectURIs, p.RedirectURI) &&
		prev.Client.Scope == regScope {
		c := prev.Client
		return &c, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("the authorization server %s offers no way to register Plexus (no registration_endpoint, no client ID metadata documents): set oauth.clientId (and oauth.clientSecret) for this server", md.issuer)
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:    []string{p.RedirectURI},
		GrantTypes:      []string{"authorization_code", "refresh_token"},
		ResponseTypes:   []string{"code"},
		ClientName:      "Plexus",
		ApplicationType: applicationType(p.RedirectURI),
	}
	meta.Scope = regScope
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, m.hc)
	var re *oauthex.ClientRegistrationError
	if errors.As(err, &re) && re.ErrorCode == "invalid_client_metadata" && meta.Scope != "" {
		// RFC 7591 §2: scope is optional, and a server may take only the
		// scopes it defines itself (oidc-provider refuses a resource's own
		// scope there): registered without, the client is not limited.
		meta.Scope = ""
		reg, err = oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, m.hc)
	}
	if err != nil {
		return nil, fmt.Errorf("registering Plexus at %s: %s", md.issuer, scrubError(err))
	}
	c := &client{ID: reg.ClientID, Secret: reg.ClientSecret, Kind: "dynamic", RedirectURIs: []string{p.RedirectURI}, Scope: regScope}
	c.AuthMethod = reg.TokenEndpointAuthMethod
	if c.AuthMethod == "" {
		// RFC 7591 §2: the default is client_secret_basic.
		c.AuthMethod = "client_secret_basic"
		if c.Secret == "" {
			c.AuthMethod = "none"
		}
	}
	return c, nil
}

// wantsOffline reports whether a login at md's authorization server asks
// for offline_access: where its metadata lists it (SEP-2207).
func wantsOffline(md *metadata) bool {
	return slices.Contains(md.asm.ScopesSupported, "offline_access")
}

func preferredSecretMethod(supported []string) string {
	for _, m := range []string{"client_secret_post", "client_secret_basic"} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return "client_secret_basic"
}

// finish checks the redirect (error, state, iss) and exchanges the code.
// The returned entry holds the tokens.
func (m *Manager) finish(ctx context.Context, pd *Pending, redirected string) (*entry, error) {
	u, err := url.Parse(strings.TrimSpace(redirected))
	if err != nil {
		return nil, errors.New("the redirected URL is not a valid URL: paste the whole address from the browser's address bar")
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		msg := "the authorization server refused the login: " + shorten(e)
		if d := q.Get("error_description"); d != "" {
			msg += " (" + shorten(d) + ")"
		}
		return nil, errors.New(msg)
	}
	if q.Get("state") != pd.state {
		return nil, errors.New("the redirect's state does not match this login (a stale or forged redirect): start again with `plexus login " + pd.Server + "`")
	}
	// RFC 9207 §2.4: when the server says it sends iss, it must be there
	// and be the issuer; an iss that is there must match in any case.
	iss := q.Get("iss")
	switch {
	case pd.e.IssSupported && iss == "":
		return nil, errors.New("the authorization server promised an iss parameter (RFC 9207) but the redirect has none: refusing it")
	case iss != "" && iss != pd.e.Issuer:
		return nil, fmt.Errorf("the redirect comes from issuer %q, not %q (RFC 9207 mix-up protection): refusing it", shorten(iss), pd.e.Issuer)
	case iss != "" && !pd.e.IssSupported:
		return nil, errors.New("the redirect carries an iss parameter the authorization server never advertised (RFC 9207): refusing it")
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("the redirect carries no authorization code")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {pd.RedirectURI},
		"code_verifier": {pd.verifier},
		"resource":      {pd.e.Resource},
	}
	tok, scope, err := m.tokenRequest(ctx, pd.e, form)
	if err != nil {
		return nil, err
	}
	e := pd.e.clone()
	e.Token = tok
	if scope != nil {
		e.Scopes = scope
	}
	return e, nil
}

// TokenError is an error answer of the token endpoint (RFC 6749 §5.2).
type TokenError struct {
	Code        string // e.g. "invalid_grant"
	Description string
	Status      int
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("the token endpoint answered HTTP %d", e.Status)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += " (" + e.Description + ")"
	}
	return s
}

// tokenRequest posts form to the token endpoint with the client's
// authentication (and a DPoP proof when e has a DPoP key: a use_dpop_nonce
// answer gets the request once more with the server's nonce) and reads the
// token. Nothing of the answer but the error code and description reaches
// the error.
func (m *Manager) tokenRequest(ctx context.Context, e *entry, form url.Values) (*token, []string, error) {
	resp, body, err := m.postToken(ctx, e, form)
	if err == nil && e.dpop() && resp.StatusCode == http.StatusBadRequest && tokenErrorCode(body) == "use_dpop_nonce" {
		if _, ok := m.keepNonce(e.Server, true, resp.Header.Values("DPoP-Nonce")); ok {
			resp, body, err = m.postToken(ctx, e, form)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if e.dpop() {
		m.keepNonce(e.Server, true, resp.Header.Values("DPoP-Nonce"))
	}
	return m.readToken(resp, body, e.dpop())
}

// tokenErrorCode is the error member of a token endpoint's JSON answer.
func tokenErrorCode(body []byte) string {
	var raw struct {
		Error string `json:"error"`
	}
	json.Unmarshal(body, &raw)
	return raw.Error
}

// postToken sends one token request; each call signs a fresh client
// assertion and DPoP proof (both are single use).
func (m *Manager) postToken(ctx context.Context, e *entry, form url.Values) (*http.Response, []byte, error) {
	form = maps.Clone(form)
	switch e.Client.AuthMethod {
	case "client_secret_post":
		form.Set("client_id", e.Client.ID)
		form.Set("client_secret", e.Client.Secret)
	case "client_secret_basic":
	case "private_key_jwt":
		if e.Client.key == nil {
			return nil, nil, errors.New("private_key_jwt needs the client's private key, and none is configured")
		}
		a, err := clientAssertion(e.Client.key, e.Client.alg, e.Client.ID, e.Issuer, m.now())
		if err != nil {
			return nil, nil, err
		}
		form.Set("client_id", e.Client.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	default:
		if e.Client.ID != "" {
			form.Set("client_id", e.Client.ID)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, errors.New("the token endpoint is not a valid URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if e.Client.AuthMethod == "client_secret_basic" {
		// RFC 6749 §2.3.1: form-encode both before the Basic encoding.
		req.SetBasicAuth(url.QueryEscape(e.Client.ID), url.QueryEscape(e.Client.Secret))
	}
	if e.dpop() {
		proof, err := dpopProof(e.DPoPKey, http.MethodPost, e.TokenURL, "", m.nonce(e.Server, true), m.now())
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("DPoP", proof)
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reaching the token endpoint: %s", scrubError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the token endpoint's answer: %s", scrubError(err))
	}
	return resp, body, nil
}

// readToken reads a token endpoint's answer. dpop says a DPoP proof was
// sent, so a DPoP token is welcome.
func (m *Manager) readToken(resp *http.Response, body []byte, dpop bool) (*token, []string, error) {
	var raw struct {
		AccessToken  string      `json:"access_token"`
		TokenType    string      `json:"token_type"`
		RefreshToken string      `json:"refresh_token"`
		ExpiresIn    json.Number `json:"expires_in"`
		Scope        string      `json:"scope"`
		Error        string      `json:"error"`
		ErrorDesc    string      `json:"error_description"`
	}
	jsonBody := json.Unmarshal(body, &raw) == nil
	if resp.StatusCode != http.StatusOK || raw.Error != "" {
		te := &TokenError{Status: resp.StatusCode}
		if jsonBody {
			te.Code, te.Description = printable(raw.Error), printable(raw.ErrorDesc)
		}
		return nil, nil, te
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" || !jsonBody {
		return nil, nil, errors.New("the token endpoint's answer is not JSON")
	}
	if raw.AccessToken == "" {
		return nil, nil, errors.New("the token endpoint's answer has no access_token")
	}
	t := &token{Access: raw.AccessToken, Refresh: raw.RefreshToken, Type: "Bearer", Obtained: m.now()}
	switch {
	case raw.TokenType == "" || strings.EqualFold(raw.TokenType, "bearer"):
	case dpop && strings.EqualFold(raw.TokenType, "dpop"):
		t.Type = "DPoP"
	default:
		return nil, nil, fmt.Errorf("the token endpoint issued a %q token; Plexus uses bearer and DPoP tokens only", shorten(printable(raw.TokenType)))
	}
	if raw.ExpiresIn != "" {
		secs, err := raw.ExpiresIn.Int64()
		if err != nil || secs < 0 {
			return nil, nil, errors.New("the token endpoint's expires_in is not a number of seconds")
		}
		if secs > 0 {
			t.Expiry = m.now().Add(time.Duration(secs) * time.Second)
		}
	}
	var scopes []string
	if raw.Scope != "" {
		scopes = strings.Fields(raw.Scope)
	}
	return t, scopes, nil
}

// printable cuts s and drops control characters: it comes from a server.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// scrubError keeps an error's text but not a URL's query, where a token
// could be.
func scrubError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + redactURL(ue.URL) + ": " + scrubError(ue.Err)
	}
	return printable(err.Error())
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// applicationType is how Plexus registers (OpenID Connect Dynamic Client
// Registration §2): a native application returning to a loopback
// listener, or a web one returning to the daemon's own page.
func applicationType(redirectURI string) string {
	if u, err := url.Parse(redirectURI); err == nil && u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1" {
		return "web"
	}
	return "native"
}
