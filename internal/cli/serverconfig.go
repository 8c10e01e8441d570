package cli

import (
	"regexp"
	"strings"
)

// The server's configuration is built as a map, in the JSON shape of
// extensions.json (SPEC §2), rather than with the daemon's config types: a
// front end depends on apitype alone, and the daemon decodes strictly and
// reports every problem with its path, so the CLI checks only what it can
// explain better than the daemon (the shape of its own flags).

// Keys of a server's configuration.
const (
	keyType           = "type"
	keyCommand        = "command"
	keyArgs           = "args"
	keyCwd            = "cwd"
	keyEnv            = "env"
	keyURL            = "url"
	keyHeaders        = "headers"
	keyBearer         = "bearerTokenEnvVar"
	keyEnabled        = "enabled"
	keyEnabledTools   = "enabledTools"
	keyDisabledTools  = "disabledTools"
	keyStartupTimeout = "startupTimeoutMs"
	keyCallTimeout    = "callTimeoutMs"
	keyOAuth          = "oauth"
)

// Transports.
const (
	typeStdio = "stdio"
	typeHTTP  = "http"
	typeSSE   = "sse"
)

// stdioKeys and remoteKeys belong to one kind of server only; a change of
// kind drops the other kind's keys, which the daemon would refuse.
var (
	stdioKeys  = []string{keyCommand, keyArgs, keyCwd, keyEnv}
	remoteKeys = []string{keyURL, keyHeaders, keyBearer, keyOAuth}
)

var (
	varName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// placeholder is $VAR or ${VAR}, resolved by the daemon (R-CFG-3).
	placeholder = regexp.MustCompile(`\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)
)

// neverInConfig is the remedy when a flag seems to carry a secret value.
// The value itself is never repeated: it may be a secret.
func neverInConfig(flag, key string) error {
	return usagef("%s %s=…: the value must name a variable, not be the secret itself: secrets are never written in config; store it with `plexus secret set VAR`, then use `%s %s=VAR`",
		flag, key, flag, key)
}

// parseHeader reads --header NAME=VAR (or NAME=text with $VAR
// placeholders) into the header's name and its config value.
func parseHeader(s string) (string, any, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		// Not quoted back: a pasted secret is a likely cause.
		return "", nil, usagef("--header needs NAME=VAR, e.g. --header X-Api-Key=SEARCH_KEY")
	}
	if !headerName.MatchString(name) {
		return "", nil, usagef("--header %q: not a valid HTTP header name", name)
	}
	switch {
	case varName.MatchString(value):
		return name, map[string]any{"env": value}, nil
	case placeholder.MatchString(value):
		return name, value, nil
	}
	return "", nil, neverInConfig("--header", name)
}

// parseEnv reads --env NAME=VAR: a stdio server's environment variable NAME
// takes the value of the secret or daemon variable VAR.
func parseEnv(s string) (string, any, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return "", nil, usagef("--env needs NAME=VAR, e.g. --env GITHUB_TOKEN=MY_GITHUB_TOKEN")
	}
	if strings.ContainsAny(name, "\x00") {
		return "", nil, usagef("--env %q: not a valid variable name", name)
	}
	if !varName.MatchString(value) {
		return "", nil, neverInConfig("--env", name)
	}
	return name, map[string]any{"env": value}, nil
}

// checkVar checks a flag that names a variable, such as --bearer-env.
func checkVar(flag, value string) error {
	if !varName.MatchString(value) {
		return usagef("%s needs a variable name (letters, digits and _), not a value: secrets are never written in config; store it with `plexus secret set VAR`, then use `%s VAR`", flag, flag)
	}
	return nil
}

// checkURL catches the common mistake of a command given where a URL is
// expected; the daemon validates the URL itself (R-CFG-4).
func checkURL(u string) error {
	l := strings.ToLower(u)
	if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
		return usagef("%q is not an http(s) URL: to run a command, put it after `--`: plexus add NAME -- COMMAND [ARGS...]", u)
	}
	return nil
}

// checkTransport checks --transport.
func checkTransport(t string) error {
	if t != typeHTTP && t != typeSSE {
		return usagef("--transport %q: want http (streamable HTTP) or sse (legacy HTTP+SSE); a command makes a stdio server", t)
	}
	return nil
}

// checkTimeout checks a millisecond flag: 0 means the default.
func checkTimeout(flag string, ms int) error {
	if ms < 0 {
		return usagef("--%s %d: want milliseconds, 0 for the default", flag, ms)
	}
	return nil
}

// setOrDelete sets key to v, or deletes it when zero is true.
func setOrDelete(m map[string]any, key string, v any, zero bool) {
	if zero {
		delete(m, key)
		return
	}
	m[key] = v
}

// subMap returns m[key] as a map, creating it when absent.
func subMap(m map[string]any, key string) map[string]any {
	if sub, ok := m[key].(map[string]any); ok {
		return sub
	}
	sub := map[string]any{}
	m[key] = sub
	return sub
}
