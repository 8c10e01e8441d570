package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Manual is a server's manual OAuth settings (R-AUTH-3), with the client
// secret already resolved from its reference.
type Manual struct {
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	Scopes       []string
}

// metadata is what discovery found for one server.
type metadata struct {
	resource string // RFC 8707 resource: the protected resource's identifier
	issuer   string
	asm      *oauthex.AuthServerMeta
	// scopes to ask for, before step-up and offline_access.
	scopes []string
	// dpopAlgs is the authorization server's
	// dpop_signing_alg_values_supported (RFC 9449 §5.1), which the SDK's
	// metadata type does not carry.
	dpopAlgs []string
	// rsDPoP is what the MCP server says of DPoP: "required"
	// (dpop_bound_access_tokens_required in its RFC 9728 metadata),
	// "accepted" (dpop_signing_alg_values_supported with ES256 there, or a
	// DPoP challenge on its 401), or "" (bearer tokens only).
	rsDPoP string
}

// DPoP postures of a resource server (metadata.rsDPoP).
const (
	dpopRequired = "required"
	dpopAccepted = "accepted"
)

// challenge is the part of a WWW-Authenticate answer discovery uses.
type challenge struct {
	resourceMetadata string
	scope            []string
	err              string
	// dpop: the answer offers the DPoP scheme (RFC 9449 §7.1), with the
	// algorithms it names in algs (none named: any).
	dpop     bool
	dpopAlgs []string
	// bearer: the answer offers the Bearer scheme.
	bearer bool
}

// parseChallenge reads the Bearer challenge of WWW-Authenticate headers; a
// malformed header counts as none (discovery then uses the well-known URLs).
func parseChallenge(headers []string) challenge {
	var c challenge
	cs, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return c
	}
	for _, ch := range cs {
		if u := ch.Params["resource_metadata"]; u != "" && c.resourceMetadata == "" {
			c.resourceMetadata = u
		}
		switch ch.Scheme {
		case "dpop":
			c.dpop = true
			c.dpopAlgs = append(c.dpopAlgs, strings.Fields(ch.Params["algs"])...)
		case "bearer":
			c.bearer = true
		default:
			continue
		}
		if s := ch.Params["scope"]; s != "" && c.scope == nil {
			c.scope = strings.Fields(s)
		}
		if e := ch.Params["error"]; e != "" && c.err == "" {
			c.err = e
		}
	}
	return c
}

// discover finds the authorization server of the MCP server at serverURL
// (R-AUTH-1), in the MCP specification's order: the protected-resource
// metadata named by the challenge, then at the path of the endpoint, then at
// the root; then the authorization server's metadata (RFC 8414, then OpenID
// discovery). A server without protected-resource metadata is taken to be
// its own authorization server (2025-03-26), and one without any metadata
// gets the default endpoints /authorize, /token and /register.
func discover(ctx context.Context, hc *http.Client, serverURL string, ch challenge, manual *Manual) (*metadata, error) {
	if manual != nil && manual.AuthURL != "" && manual.TokenURL != "" {
		return manualMetadata(serverURL, manual)
	}
	md := &metadata{resource: serverURL}
	var prm *oauthex.ProtectedResourceMetadata
	for _, c := range prmCandidates(ch.resourceMetadata, serverURL) {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, hc)
		if err != nil || p == nil {
			continue
		}
		if len(p.AuthorizationServers) == 0 {
			return nil, errors.New("the server's protected-resource metadata names no authorization server")
		}
		prm = p
		break
	}
	switch {
	case prm != nil && prm.DPOPBoundAccessTokensRequired:
		md.rsDPoP = dpopRequired
	case prm != nil && slices.Contains(prm.DPOPSigningAlgValuesSupported, "ES256"),
		ch.dpop && (len(ch.dpopAlgs) == 0 || slices.Contains(ch.dpopAlgs, "ES256")):
		md.rsDPoP = dpopAccepted
	}
	if prm != nil {
		md.resource = prm.Resource
		md.issuer = prm.AuthorizationServers[0]
	} else {
		u, err := url.Parse(serverURL)
		if err != nil {
			return nil, errors.New("the server URL is not valid")
		}
		u.Path, u.RawPath, u.RawQuery = "", "", ""
		md.issuer = u.String()
	}
	rec := &metadataRecorder{base: hc.Transport}
	rhc := *hc
	rhc.Transport = rec
	asm, err := auth.GetAuthServerMetadata(ctx, md.issuer, &rhc)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{
			Issuer:                md.issuer,
			AuthorizationEndpoint: md.issuer + "/authorize",
			TokenEndpoint:         md.issuer + "/token",
			RegistrationEndpoint:  md.issuer + "/register",
			// Without metadata there is nothing to say PKCE is supported;
			// OAuth 2.1 requires it of every server, so S256 is sent anyway.
			CodeChallengeMethodsSupported: []string{"S256"},
		}
	} else if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		// MCP authorization: "MCP clients MUST verify PKCE support before
		// proceeding with authorization" and "MUST use the S256 code
		// challenge method".
		return nil, fmt.Errorf("the authorization server %s does not advertise PKCE with S256 (code_challenge_methods_supported): Plexus refuses to log in without it", md.issuer)
	}
	if err := checkMetadataEndpoints(asm); err != nil {
		return nil, err
	}
	md.asm = asm
	md.dpopAlgs = rec.dpopAlgs(asm.Issuer)
	switch {
	case manual != nil && len(manual.Scopes) > 0:
		md.scopes = slices.Clone(manual.Scopes)
	case len(ch.scope) > 0:
		md.scopes = ch.scope
	case prm != nil && len(prm.ScopesSupported) > 0:
		md.scopes = slices.Clone(prm.ScopesSupported)
	}
	return md, nil
}

func manualMetadata(serverURL string, m *Manual) (*metadata, error) {
	u, err := url.Parse(m.AuthURL)
	if err != nil {
		return nil, errors.New("oauth.authUrl is not a valid URL")
	}
	asm := &oauthex.AuthServerMeta{
		Issuer:                (&url.URL{Scheme: u.Scheme, Host: u.Host}).String(),
		AuthorizationEndpoint: m.AuthURL,
		TokenEndpoint:         m.TokenURL,
	}
	if err := checkMetadataEndpoints(asm); err != nil {
		return nil, err
	}
	return &metadata{resource: serverURL, issuer: asm.Issuer, asm: asm, scopes: slices.Clone(m.Scopes)}, nil
}

// checkMetadataEndpoints applies R-AUTH-4 to every endpoint Plexus will
// reach or open.
func checkMetadataEndpoints(asm *oauthex.AuthServerMeta) error {
	if err := CheckAuthorizationEndpoint(asm.AuthorizationEndpoint); err != nil {
		return fmt.Errorf("refusing the authorization server's authorization_endpoint: it %w", err)
	}
	if err := CheckEndpoint(asm.TokenEndpoint); err != nil {
		return fmt.Errorf("refusing the authorization server's token_endpoint: it %w", err)
	}
	if asm.RegistrationEndpoint != "" {
		if err := CheckEndpoint(asm.RegistrationEndpoint); err != nil {
			return fmt.Errorf("refusing the authorization server's registration_endpoint: it %w", err)
		}
	}
	return nil
}

type prmCandidate struct{ url, resource string }

// prmCandidates lists where protected-resource metadata may be, in the
// order of the MCP specification (2025-11-25, "Protected Resource Metadata
// Discovery Requirements"): the challenge's resource_metadata, then
// "/.well-known/oauth-protected-resource" inserted before the endpoint's
// path, then at the root (whose resource is the origin).
func prmCandidates(fromChallenge, serverURL string) []prmCandidate {
	var out []prmCandidate
	if fromChallenge != "" {
		out = append(out, prmCandidate{fromChallenge, serverURL})
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return out
	}
	m := *u
	m.RawQuery, m.RawPath = "", ""
	if p := strings.Trim(u.Path, "/"); p != "" {
		m.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, prmCandidate{m.String(), serverURL})
	}
	m.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawPath, root.RawQuery = "", "", ""
	return append(out, prmCandidate{m.String(), root.String()})
}
