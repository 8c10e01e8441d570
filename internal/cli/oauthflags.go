package cli

import (
	"github.com/spf13/pflag"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// oauthFlags set a URL server's OAuth grant without a person (client
// credentials, workload JWT bearer, enterprise token exchange) and its
// client. Secrets are named, never given: --client-secret-env VAR.
type oauthFlags struct {
	grant, clientID, clientSecretEnv, authMethod string
	privateKeyEnv, privateKeyFile, signingAlg    string
	tokenFile                                    string
	idpTokenURL, idpClientID, idpClientSecretEnv string
	idTokenFile                                  string
	scopes                                       []string
}

// oauthFlag ties a flag to its key in the server's "oauth" object; env
// flags name a variable, and are written as { "env": VAR }.
type oauthFlag struct {
	name, key, usage string
	env              bool
	value            func(*oauthFlags) *string
}

var oauthFlagList = []oauthFlag{
	{"oauth-grant", "grant", "obtain tokens without a browser with `GRANT`: client_credentials, jwt_bearer (workload identity) or token_exchange (enterprise-managed)", false, func(o *oauthFlags) *string { return &o.grant }},
	{"client-id", "clientId", "Plexus's OAuth client `ID` at the server's authorization server", false, func(o *oauthFlags) *string { return &o.clientID }},
	{"client-secret-env", "clientSecret", "the OAuth client secret is the value of secret `VAR`", true, func(o *oauthFlags) *string { return &o.clientSecretEnv }},
	{"client-auth", "authMethod", "authenticate the client with `METHOD`: client_secret_basic, client_secret_post or private_key_jwt (default: what the server offers)", false, func(o *oauthFlags) *string { return &o.authMethod }},
	{"private-key-env", "privateKey", "sign private_key_jwt assertions with the PEM key in secret `VAR`", true, func(o *oauthFlags) *string { return &o.privateKeyEnv }},
	{"private-key-file", "privateKeyFile", "sign private_key_jwt assertions with the PEM key in `FILE` (absolute path)", false, func(o *oauthFlags) *string { return &o.privateKeyFile }},
	{"signing-alg", "signingAlg", "sign client assertions with `ALG` (default: the key's, e.g. ES256)", false, func(o *oauthFlags) *string { return &o.signingAlg }},
	{"token-file", "tokenFile", "jwt_bearer: the workload's JWT is in `FILE`, kept current by the platform", false, func(o *oauthFlags) *string { return &o.tokenFile }},
	{"idp-token-url", "idpTokenUrl", "token_exchange: the identity provider's token endpoint `URL`", false, func(o *oauthFlags) *string { return &o.idpTokenURL }},
	{"idp-client-id", "idpClientId", "token_exchange: Plexus's client `ID` at the identity provider", false, func(o *oauthFlags) *string { return &o.idpClientID }},
	{"idp-client-secret-env", "idpClientSecret", "token_exchange: the identity provider client secret is secret `VAR`", true, func(o *oauthFlags) *string { return &o.idpClientSecretEnv }},
	{"id-token-file", "idTokenFile", "token_exchange: the person's ID token from the identity provider is in `FILE`", false, func(o *oauthFlags) *string { return &o.idTokenFile }},
}

func (o *oauthFlags) register(fs *pflag.FlagSet, edit bool) {
	for _, f := range oauthFlagList {
		u := f.usage
		if edit {
			u += "; '' removes it"
		}
		fs.StringVar(f.value(o), f.name, "", u)
	}
	fs.StringSliceVar(&o.scopes, "oauth-scopes", nil, "ask for the OAuth scopes `a,b`")
}

// used reports whether any OAuth flag is set (for add).
func (o *oauthFlags) used() bool {
	for _, f := range oauthFlagList {
		if *f.value(o) != "" {
			return true
		}
	}
	return len(o.scopes) > 0
}

// apply writes the given flags into cfg's "oauth" object; an empty value
// given to edit removes the key, and an emptied object is removed.
func (o *oauthFlags) apply(cfg map[string]any, given func(name string, nonZero bool) bool) error {
	var sub map[string]any
	get := func() map[string]any {
		if sub == nil {
			sub = serverconf.SubMap(cfg, serverconf.KeyOAuth)
		}
		return sub
	}
	for _, f := range oauthFlagList {
		v := *f.value(o)
		if !given(f.name, v != "") {
			continue
		}
		if v == "" {
			delete(get(), f.key)
			continue
		}
		if f.env {
			if err := checkVar("--"+f.name, v); err != nil {
				return err
			}
			get()[f.key] = map[string]any{"env": v}
			continue
		}
		get()[f.key] = v
	}
	if given("oauth-scopes", len(o.scopes) > 0) {
		setOrDelete(get(), "scopes", o.scopes, len(o.scopes) == 0)
	}
	if sub != nil && len(sub) == 0 {
		delete(cfg, serverconf.KeyOAuth)
	}
	return nil
}
