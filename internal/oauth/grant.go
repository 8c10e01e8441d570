package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// The grants by which the daemon obtains a server's tokens without a
// person: no browser, and a new token is fetched the same way before the old
// one expires.
const (
	// GrantClientCredentials is OAuth's client credentials grant (the MCP
	// client credentials extension) for machine-to-machine servers.
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is RFC 7523 §2.1: a JWT the platform issues to the
	// workload (workload identity federation), read from a file.
	GrantJWTBearer = "jwt_bearer"
	// GrantTokenExchange is enterprise-managed authorization (cross-app
	// access): an identity assertion is exchanged at the enterprise's
	// identity provider (RFC 8693) for an ID-JAG, which the server's
	// authorization server takes as a JWT bearer grant.
	GrantTokenExchange = "token_exchange"
)

const (
	jwtBearerGrantType     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
	idTokenType            = "urn:ietf:params:oauth:token-type:id_token"
	idJAGTokenType         = "urn:ietf:params:oauth:token-type:id-jag"
)

// Grant configures one of the grants without a person. Secrets arrive
// resolved (from the environment names the configuration holds) and are
// never written to oauth.json.
type Grant struct {
	Type     string // one of the Grant* constants
	ClientID string
	// ClientSecret authenticates with client_secret_basic or
	// client_secret_post; PrivateKey (PEM) with private_key_jwt.
	ClientSecret string
	PrivateKey   []byte
	// PrivateKeyFile, if PrivateKey is empty, holds the PEM key; it is
	// read at each token request (a mounted secret may be rotated).
	PrivateKeyFile string
	// AuthMethod forces the client authentication; "" picks from the
	// authorization server's token_endpoint_auth_methods_supported.
	AuthMethod string
	SigningAlg string // for private_key_jwt; "" is the key's default
	// AssertionFile holds the workload's JWT (GrantJWTBearer), re-read at
	// every token request: the platform rotates it.
	AssertionFile string
	Scopes        []string
	// IDP is the enterprise identity provider (GrantTokenExchange).
	IDP *IdentityProvider
}

// IdentityProvider is where an identity assertion is exchanged for an
// ID-JAG.
type IdentityProvider struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	// IDTokenFile holds the person's ID token from the identity provider
	// (written by the enterprise's sign-in agent), re-read at each exchange.
	IDTokenFile string
}

// Check reports what is missing from g, in one error.
func (g *Grant) Check() error {
	var bad []string
	switch g.Type {
	case GrantClientCredentials:
		if g.ClientID == "" {
			bad = append(bad, "a client ID")
		}
		if g.ClientSecret == "" && len(g.PrivateKey) == 0 && g.PrivateKeyFile == "" {
			bad = append(bad, "a client secret or a private key")
		}
	case GrantJWTBearer:
		if g.AssertionFile == "" {
			bad = append(bad, "a token file")
		}
	case GrantTokenExchange:
		if g.ClientID == "" {
			bad = append(bad, "a client ID")
		}
		if g.IDP == nil || g.IDP.TokenURL == "" || g.IDP.IDTokenFile == "" {
			bad = append(bad, "the identity provider's token URL and ID token file")
		}
	default:
		return fmt.Errorf("unknown OAuth grant %q", printable(g.Type))
	}
	if len(bad) > 0 {
		return fmt.Errorf("the %s grant needs %s", g.Type, strings.Join(bad, " and "))
	}
	return nil
}

// SetGrant says that server's tokens come from p.Grant, not from a login;
// nil p.Grant undoes it. A changed grant forgets a refusal of the last one.
func (m *Manager) SetGrant(p LoginParams) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stateLocked(p.Server)
	if p.Grant == nil {
		st.grant, st.grantErr = nil, ""
		return
	}
	c := p
	st.grant, st.grantErr = &c, ""
}

// grantOf returns the grant parameters of server and why the last attempt
// failed, if it did.
func (m *Manager) grantOf(server string) (*LoginParams, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.servers[server]
	if st == nil || st.grant == nil {
		return nil, ""
	}
	return st.grant, st.grantErr
}

// obtain runs discovery and p's grant and stores the token. A refusal is
// remembered: the grant is not tried again until Login or SetGrant (the
// MCP extensions say a client must not retry or switch grants on an error).
func (m *Manager) obtain(ctx context.Context, p LoginParams) (*entry, error) {
	e, err := m.runGrant(ctx, p)
	m.auditLogin(ctx, p.Server, p.Grant.Type, err)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) {
			m.mu.Lock()
			m.stateLocked(p.Server).grantErr = err.Error()
			m.mu.Unlock()
			m.markNeedsLogin(p.Server, "the authorization server refused the "+p.Grant.Type+" grant: "+te.Code, nil)
		}
		return nil, err
	}
	stored := e.clone()
	stored.Client.Secret, stored.Client.key = "", nil // the configuration holds them
	if err := m.store(stored); err != nil {
		return nil, err
	}
	m.log.Info("OAuth token obtained", "server", p.Server, "grant", p.Grant.Type, "issuer", e.Issuer)
	m.changed(p.Server)
	return e, nil
}

func (m *Manager) runGrant(ctx context.Context, p LoginParams) (*entry, error) {
	g := p.Grant
	if err := g.Check(); err != nil {
		return nil, err
	}
	md, err := discover(ctx, m.hc, p.URL, parseChallenge(p.Challenge), p.Manual)
	if err != nil {
		return nil, err
	}
	prev := m.entryFor(p.Server)
	scopes := g.Scopes
	if len(scopes) == 0 {
		scopes = md.scopes
	}
	e := &entry{
		Server:   p.Server,
		Issuer:   md.issuer,
		Resource: md.resource,
		AuthURL:  md.asm.AuthorizationEndpoint,
		TokenURL: md.asm.TokenEndpoint,
		Grant:    g.Type,
		Scopes:   slices.Clone(scopes),
	}
	if e.DPoPKey, err = m.dpopKeyFor(md, prev); err != nil {
		return nil, err
	}
	if e.Client, err = grantClient(g, md.asm.TokenEndpointAuthMethodsSupported); err != nil {
		return nil, err
	}
	form := url.Values{"resource": {md.resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	switch g.Type {
	case GrantClientCredentials:
		form.Set("grant_type", "client_credentials")
	case GrantJWTBearer:
		a, err := readAssertion(g.AssertionFile, "the workload token file")
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", jwtBearerGrantType)
		form.Set("assertion", a)
	case GrantTokenExchange:
		jag, err := m.exchange(ctx, g, md.issuer, md.resource, scopes)
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", jwtBearerGrantType)
		form.Set("assertion", jag)
	}
	tok, granted, err := m.tokenRequest(ctx, e, form)
	if err != nil {
		return nil, err
	}
	e.Token = tok
	if granted != nil {
		e.Scopes = granted
	}
	return e, nil
}

// grantClient is the client identity of g at an authorization server that
// supports methods.
func grantClient(g *Grant, methods []string) (client, error) {
	c := client{ID: g.ClientID, Secret: g.ClientSecret, Kind: "configured", AuthMethod: g.AuthMethod}
	pemKey := g.PrivateKey
	if len(pemKey) == 0 && g.PrivateKeyFile != "" {
		var err error
		if pemKey, err = os.ReadFile(g.PrivateKeyFile); err != nil {
			return c, fmt.Errorf("reading the client's private key file: %w", err)
		}
	}
	if len(pemKey) > 0 {
		k, err := parsePrivateKey(pemKey)
		if err != nil {
			return c, fmt.Errorf("the client's private key: %w", err)
		}
		c.key, c.alg = k, g.SigningAlg
	}
	if c.AuthMethod != "" {
		return c, nil
	}
	switch {
	case c.key != nil:
		c.AuthMethod = "private_key_jwt"
	case c.Secret != "":
		c.AuthMethod = preferredSecretMethod(methods)
	default:
		c.AuthMethod = "none"
	}
	return c, nil
}

// readAssertion reads a JWT from path: one line, three dot-separated parts.
// Errors name the file, never its content.
func readAssertion(path, what string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	a := strings.TrimSpace(string(data))
	if strings.Count(a, ".") != 2 || strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", fmt.Errorf("%s %s does not hold a JWT", what, path)
	}
	return a, nil
}

// Obtain gets server a new token with its grant now, whatever it holds,
// and forgets an earlier refusal (`plexus login` of such a server).
func (m *Manager) Obtain(ctx context.Context, server string) error {
	m.mu.Lock()
	st := m.stateLocked(server)
	st.grantErr = ""
	g := st.grant
	m.mu.Unlock()
	if g == nil {
		return fmt.Errorf("%s has no OAuth grant without a person: log in with the browser", server)
	}
	st.flight.Lock()
	defer st.flight.Unlock()
	_, err := m.obtain(ctx, *g)
	return err
}
