package tui

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// The form's OAuth rows: how Plexus gets a remote server's tokens, the
// same settings as `plexus add --oauth-grant …` (the server's "oauth"
// object). Secrets are typed masked, sent once as managed secrets named
// for the server (serverconf.VarFor), and never shown again.

// Options of the grant row: "browser login" is the authorization code
// flow (no grant key); the others are the config's grants.
const grantLogin = "browser login"

var grantChoices = []string{grantLogin, "client_credentials", "jwt_bearer", "token_exchange"}

// authDefault leaves the client authentication to what the server offers.
const authDefault = "default"

var authChoices = []string{authDefault, "client_secret_basic", "client_secret_post", "private_key_jwt"}

// grantKeys ties each text row to its key in "oauth".
var grantKeys = map[field]string{
	fClientID: "clientId", fClientSecret: "clientSecret", fPrivateKey: "privateKey", fPrivateKeyFile: "privateKeyFile",
	fTokenFile: "tokenFile", fIDPTokenURL: "idpTokenUrl", fIDPClientID: "idpClientId", fIDPClientSecret: "idpClientSecret",
	fIDTokenFile: "idTokenFile", fScopes: "scopes",
}

// grantSecrets are the secret keys, with the word their variable is named
// for.
var grantSecrets = map[string]string{"clientSecret": "client_secret", "privateKey": "private_key", "idpClientSecret": "idp_client_secret"}

func (f *form) newGrantInputs() {
	f.choices[fGrant], f.choices[fAuthMethod] = grantChoices, authChoices
	f.inputs[fClientID] = newInput("blank for a browser login: Plexus registers itself", false)
	f.inputs[fClientSecret] = newInput("stored as a secret", true)
	f.inputs[fPrivateKey] = newInput("paste the PEM; stored as a secret", true)
	f.inputs[fPrivateKeyFile] = newInput("or the key's file, an absolute path", false)
	f.inputs[fTokenFile] = newInput("the workload's JWT file, an absolute path", false)
	f.inputs[fIDPTokenURL] = newInput("https://idp.example.com/oauth2/token", false)
	f.inputs[fIDPClientID] = newInput("Plexus's client at the identity provider", false)
	f.inputs[fIDPClientSecret] = newInput("stored as a secret", true)
	f.inputs[fIDTokenFile] = newInput("the person's ID token file, an absolute path", false)
	f.inputs[fScopes] = newInput("blank: the server's; or read write", false)
}

// grantFields are the OAuth rows of the grant and client authentication
// chosen.
func (f *form) grantFields() []field {
	grant := f.choice(fGrant)
	if grant == grantLogin {
		return []field{fGrant, fClientID, fClientSecret, fScopes}
	}
	fs := []field{fGrant, fClientID, fAuthMethod}
	if f.choice(fAuthMethod) == "private_key_jwt" {
		fs = append(fs, fPrivateKey, fPrivateKeyFile)
	} else {
		fs = append(fs, fClientSecret)
	}
	switch grant {
	case "jwt_bearer":
		fs = append(fs, fTokenFile)
	case "token_exchange":
		fs = append(fs, fIDPTokenURL, fIDPClientID, fIDPClientSecret, fIDTokenFile)
	}
	return append(fs, fScopes)
}

// fillGrant shows a stored server's "oauth": its settings, and for a
// stored secret only that there is one.
func (f *form) fillGrant(cfg map[string]any) {
	o, _ := cfg[serverconf.KeyOAuth].(map[string]any)
	if g, _ := o["grant"].(string); g != "" {
		f.choose(fGrant, g)
	}
	if m, _ := o["authMethod"].(string); m != "" {
		f.choose(fAuthMethod, m)
	}
	for fl, key := range grantKeys {
		switch v := o[key].(type) {
		case string:
			f.inputs[fl].SetValue(v)
		case []any:
			var words []string
			for _, w := range v {
				if s, ok := w.(string); ok {
					words = append(words, s)
				}
			}
			f.inputs[fl].SetValue(strings.Join(words, " "))
		case map[string]any:
			f.inputs[fl].Placeholder = "stored: blank keeps it, - removes it"
		}
	}
}

// grantValues are the OAuth rows shown, by their key in "oauth".
func (f *form) grantValues() map[string]string {
	out := map[string]string{}
	for _, fl := range f.grantFields() {
		switch fl {
		case fGrant:
			if g := f.choice(fGrant); g != grantLogin {
				out["grant"] = g
			}
		case fAuthMethod:
			if m := f.choice(fAuthMethod); m != authDefault {
				out["authMethod"] = m
			}
		default:
			out[grantKeys[fl]] = f.inputs[fl].Value()
		}
	}
	return out
}

// oauthKeys are the keys of "oauth" the form sets; the others (authUrl,
// tokenUrl, signingAlg) are kept as stored.
var oauthKeys = append(slices.Collect(maps.Values(grantKeys)), "grant", "authMethod")

// applyGrant writes the OAuth rows into cfg's "oauth": a setting of a
// grant not chosen is dropped (the daemon refuses one it would ignore), a
// blank secret keeps the stored one and "-" removes it. The daemon checks
// the rest, as for `plexus add --oauth-grant`.
func applyGrant(cfg map[string]any, server string, shown map[string]string, secrets map[string]string, forget func(any, string)) {
	o := map[string]any{}
	if old, ok := cfg[serverconf.KeyOAuth].(map[string]any); ok {
		o = maps.Clone(old)
	}
	for _, key := range oauthKeys {
		v, ok := shown[key]
		what, secret := grantSecrets[key]
		switch {
		case !ok:
			if secret {
				forget(o[key], what)
			}
			delete(o, key)
		case secret && strings.TrimSpace(v) == "":
			// blank keeps the stored secret
		case secret && strings.TrimSpace(v) == removeMark:
			forget(o[key], what)
			delete(o, key)
		case secret:
			ref := serverconf.VarFor(server, what)
			o[key] = map[string]any{"env": ref}
			if key == "privateKey" {
				v = repairPEM(v)
			}
			secrets[ref] = v
		case strings.TrimSpace(v) == "":
			delete(o, key)
		case key == "scopes":
			o[key] = strings.Fields(strings.ReplaceAll(v, ",", " "))
		default:
			o[key] = strings.TrimSpace(v)
		}
	}
	serverconf.SetOrDelete(cfg, serverconf.KeyOAuth, o, len(o) == 0)
}

// pemOneLine is a PEM block pasted into a one-line field, which turns its
// line breaks into spaces.
var pemOneLine = regexp.MustCompile(`^\s*(-----BEGIN [A-Z0-9 ]+-----)\s*(.*?)\s*(-----END [A-Z0-9 ]+-----)\s*$`)

// repairPEM gives a pasted PEM block its line breaks back: the base64
// holds no spaces, so every space was one.
func repairPEM(v string) string {
	m := pemOneLine.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	return m[1] + "\n" + strings.Join(strings.Fields(m[2]), "\n") + "\n" + m[3] + "\n"
}
