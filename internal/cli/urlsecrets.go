package cli

import (
	"maps"
	"slices"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// moveURLSecrets takes the key-like query values out of a URL server's
// URL (?api_key=…): each is sent as a managed secret of the server, and
// the settings hold ${VAR} in its place. It returns the secrets to send.
func moveURLSecrets(server string, cfg map[string]any) map[string]string {
	raw, ok := cfg[keyURL].(string)
	if !ok {
		return nil
	}
	u, moved := serverconf.MoveURLSecrets(server, raw)
	if len(moved) == 0 {
		return nil
	}
	cfg[keyURL] = u
	secrets := map[string]string{}
	for _, m := range moved {
		secrets[m.Var] = m.Value
	}
	return secrets
}

// noteURLSecrets says where the URL's secrets went: names only.
func (a *app) noteURLSecrets(secrets map[string]string) {
	for _, v := range slices.Sorted(maps.Keys(secrets)) {
		a.warnf("a key in the URL is stored as the managed secret %s; the settings hold ${%s}", v, v)
	}
}
