package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// exchange trades the person's ID token at the enterprise identity
// provider for an identity assertion JWT authorization grant (ID-JAG) for
// the authorization server issuer and the MCP server resource (RFC 8693
// token exchange, as the enterprise-managed authorization extension uses
// it).
func (m *Manager) exchange(ctx context.Context, g *Grant, issuer, resource string, scopes []string) (string, error) {
	idToken, err := readAssertion(g.IDP.IDTokenFile, "the ID token file")
	if err != nil {
		return "", err
	}
	if err := CheckEndpoint(g.IDP.TokenURL); err != nil {
		return "", fmt.Errorf("the identity provider's token URL %w", err)
	}
	form := url.Values{
		"grant_type":           {tokenExchangeGrantType},
		"subject_token":        {idToken},
		"subject_token_type":   {idTokenType},
		"requested_token_type": {idJAGTokenType},
		"audience":             {issuer},
		"resource":             {resource},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	idp := &entry{
		Server:   "",
		TokenURL: g.IDP.TokenURL,
		Client:   client{ID: g.IDP.ClientID, Secret: g.IDP.ClientSecret, AuthMethod: "none"},
	}
	if g.IDP.ClientSecret != "" {
		idp.Client.AuthMethod = "client_secret_post"
	}
	resp, body, err := m.postToken(ctx, idp, form)
	if err != nil {
		return "", fmt.Errorf("identity provider: %w", err)
	}
	jag, err := parseExchange(resp.StatusCode, resp.Header.Get("Content-Type"), body)
	if err != nil {
		return "", fmt.Errorf("identity provider: %w", err)
	}
	return jag, nil
}

// parseExchange reads a token exchange answer (RFC 8693 §2.2): it must
// issue an ID-JAG (issued_token_type), with token_type N_A, since the
// assertion is not an access token. Errors carry only the error code and
// description, never the body.
func parseExchange(status int, contentType string, body []byte) (string, error) {
	var raw struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		Error           string `json:"error"`
		ErrorDesc       string `json:"error_description"`
	}
	isJSON := json.Unmarshal(body, &raw) == nil
	if status != http.StatusOK || raw.Error != "" {
		te := &TokenError{Status: status}
		if isJSON {
			te.Code, te.Description = printable(raw.Error), printable(raw.ErrorDesc)
		}
		return "", te
	}
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "application/json" || !isJSON {
		return "", errors.New("the token exchange answer is not JSON")
	}
	if raw.IssuedTokenType != idJAGTokenType {
		return "", fmt.Errorf("the token exchange issued %q, not an ID-JAG (%s)", shorten(printable(raw.IssuedTokenType)), idJAGTokenType)
	}
	if !strings.EqualFold(raw.TokenType, "N_A") {
		return "", fmt.Errorf("the token exchange's token_type is %q, not N_A: an ID-JAG is not an access token", shorten(printable(raw.TokenType)))
	}
	a := raw.AccessToken
	if strings.Count(a, ".") != 2 || strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", errors.New("the token exchange's ID-JAG is not a JWT")
	}
	return a, nil
}
