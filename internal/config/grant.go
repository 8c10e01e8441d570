package config

import "path/filepath"

// validateGrant checks an OAuth grant without a person: that it is one
// Plexus knows and has what it needs, and that nothing of another grant is
// set where it would be silently ignored.
func validateGrant(ps *problems, p string, o OAuth) {
	at := func(key string) string { return KeyPath(p, key) }
	for key, r := range map[string]*Ref{"privateKey": o.PrivateKey, "idpClientSecret": o.IDPClientSecret} {
		if r != nil {
			checkVar(ps, KeyPath(at(key), "env"), r.Env)
		}
	}
	for key, f := range map[string]string{"privateKeyFile": o.PrivateKeyFile, "tokenFile": o.TokenFile, "idTokenFile": o.IDTokenFile} {
		if f != "" && !filepath.IsAbs(f) {
			ps.add(at(key), "must be an absolute path")
		}
	}
	switch o.AuthMethod {
	case "", "client_secret_basic", "client_secret_post", "private_key_jwt", "none":
	default:
		ps.add(at("authMethod"), "must be client_secret_basic, client_secret_post, private_key_jwt or none")
	}
	switch o.SigningAlg {
	case "", "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA":
	default:
		ps.add(at("signingAlg"), "is not a JWS algorithm Plexus signs with")
	}
	if o.PrivateKey != nil && o.PrivateKeyFile != "" {
		ps.add(p, "set privateKey or privateKeyFile, not both")
	}
	hasKey := o.PrivateKey != nil || o.PrivateKeyFile != ""
	if o.AuthMethod == "private_key_jwt" && !hasKey {
		ps.add(at("authMethod"), "private_key_jwt needs privateKey or privateKeyFile")
	}
	idp := o.IDPTokenURL != "" || o.IDPClientID != "" || o.IDPClientSecret != nil || o.IDTokenFile != ""
	switch o.Grant {
	case "":
		if hasKey || o.TokenFile != "" || idp {
			ps.add(p, "privateKey, tokenFile and the identity provider settings need a grant (client_credentials, jwt_bearer or token_exchange)")
		}
	case GrantClientCredentials:
		if o.ClientID == "" {
			ps.add(at("clientId"), "is needed by the client_credentials grant")
		}
		if o.ClientSecret == nil && !hasKey {
			ps.add(p, "the client_credentials grant needs clientSecret, privateKey or privateKeyFile")
		}
	case GrantJWTBearer:
		if o.TokenFile == "" {
			ps.add(at("tokenFile"), "is needed by the jwt_bearer grant: the file the platform writes the workload's token to")
		}
	case GrantTokenExchange:
		if o.ClientID == "" {
			ps.add(at("clientId"), "is needed by the token_exchange grant")
		}
		if o.IDPTokenURL == "" || o.IDTokenFile == "" {
			ps.add(p, "the token_exchange grant needs idpTokenUrl and idTokenFile")
		}
	default:
		ps.add(at("grant"), "must be client_credentials, jwt_bearer or token_exchange (or absent for a login in the browser)")
	}
}
