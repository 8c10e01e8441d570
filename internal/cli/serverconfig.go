package cli

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// The server's configuration is built as a map, in the JSON shape of
// extensions.json (R-CFG, docs/requirements.md), rather than with the daemon's config types: a
// front end depends on apitype alone, and the daemon decodes strictly and
// reports every problem with its path, so the CLI checks only what it can
// explain better than the daemon (the shape of its own flags).

// Keys and transports of a server's configuration (shared with the
// terminal UI in serverconf).
const (
	keyType           = serverconf.KeyType
	keyCommand        = serverconf.KeyCommand
	keyArgs           = serverconf.KeyArgs
	keyCwd            = serverconf.KeyCwd
	keyEnv            = serverconf.KeyEnv
	keyURL            = serverconf.KeyURL
	keyHeaders        = serverconf.KeyHeaders
	keyBearer         = serverconf.KeyBearer
	keyEnabled        = serverconf.KeyEnabled
	keyEnabledTools   = serverconf.KeyEnabledTools
	keyDisabledTools  = serverconf.KeyDisabledTools
	keyStartupTimeout = serverconf.KeyStartupTimeout
	keyCallTimeout    = serverconf.KeyCallTimeout
	keyStart          = serverconf.KeyStart
	keyIdleStop       = serverconf.KeyIdleStop
	keyInstallTimeout = serverconf.KeyInstallTimeout

	typeStdio = serverconf.TypeStdio
	typeHTTP  = serverconf.TypeHTTP
	typeSSE   = serverconf.TypeSSE
)

var (
	stdioKeys   = serverconf.StdioKeys
	remoteKeys  = serverconf.RemoteKeys
	setOrDelete = serverconf.SetOrDelete
	subMap      = serverconf.SubMap
	setArgv     = serverconf.SetArgv
	findFold    = serverconf.FindFold
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
// millisFlag is a flag of milliseconds that also takes a duration with
// its unit, as people write them (parseMillis): 5000, 5s, 2m, 1m30s.
type millisFlag int

func (m *millisFlag) String() string { return strconv.Itoa(int(*m)) }
func (m *millisFlag) Type() string   { return "MS" }

func (m *millisFlag) Set(s string) error {
	n, err := parseMillis(s)
	if err != nil {
		return err
	}
	*m = millisFlag(n)
	return nil
}

func checkTimeout(flag string, ms int) error {
	if ms < 0 {
		return usagef("--%s %d: want milliseconds, 0 for the default", flag, ms)
	}
	return nil
}
