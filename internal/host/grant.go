package host

import (
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/oauth"
)

// grantOf builds the OAuth grant without a person that o configures, or nil
// for a server a person logs in to. get resolves the secrets o names.
func grantOf(o *config.OAuth, get func(string) (string, error)) (*oauth.Grant, error) {
	if o == nil || o.Grant == "" {
		return nil, nil
	}
	secret := func(r *config.Ref) (string, error) {
		if r == nil {
			return "", nil
		}
		return get(r.Env)
	}
	g := &oauth.Grant{
		ClientID:       o.ClientID,
		AuthMethod:     o.AuthMethod,
		PrivateKeyFile: o.PrivateKeyFile,
		SigningAlg:     o.SigningAlg,
		AssertionFile:  o.TokenFile,
		Scopes:         o.Scopes,
	}
	switch o.Grant {
	case config.GrantClientCredentials:
		g.Type = oauth.GrantClientCredentials
	case config.GrantJWTBearer:
		g.Type = oauth.GrantJWTBearer
	case config.GrantTokenExchange:
		g.Type = oauth.GrantTokenExchange
	}
	var err error
	if g.ClientSecret, err = secret(o.ClientSecret); err != nil {
		return nil, err
	}
	key, err := secret(o.PrivateKey)
	if err != nil {
		return nil, err
	}
	if key != "" {
		g.PrivateKey = []byte(key)
	}
	if o.Grant == config.GrantTokenExchange {
		g.IDP = &oauth.IdentityProvider{TokenURL: o.IDPTokenURL, ClientID: o.IDPClientID, IDTokenFile: o.IDTokenFile}
		if g.IDP.ClientSecret, err = secret(o.IDPClientSecret); err != nil {
			return nil, err
		}
	}
	return g, nil
}
