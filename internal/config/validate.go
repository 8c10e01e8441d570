package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Validate checks the rules of R-CFG that the JSON types cannot express,
// and reports every broken one as an *Error. Decode calls it; the daemon calls
// it again on every edited copy before committing it.
func Validate(f *File) error {
	var ps problems
	validateFile(&ps, f)
	return ps.err()
}

// maxMs keeps millisecond settings convertible to a time.Duration.
const maxMs = math.MaxInt64 / int64(time.Millisecond)

// minKeepAliveMs is the shortest keep-alive interval: a health check more
// often than this is load, not health.
const minKeepAliveMs = 100

const (
	msgVarRequired = "is required: the name of an environment variable"
	msgVarName     = "is not a valid environment variable name (letters, digits and '_', not starting with a digit)"
	msgName        = "is not a valid name: use 1 to 32 letters, digits, '_' or '-', starting with a letter or digit"
)

func validateFile(ps *problems, f *File) {
	if f == nil {
		ps.add("", "no configuration")
		return
	}
	if f.Revision < 0 {
		ps.add("revision", "must not be negative")
	}
	m := f.MCP
	checkMs(ps, "mcp.retryMs", int64(m.RetryMs))
	checkMs(ps, "mcp.callTimeoutMs", int64(m.CallTimeoutMs))
	if m.OAuthClientMetadataURL != "" {
		if err := CheckClientMetadataURL(m.OAuthClientMetadataURL); err != nil {
			ps.add("mcp.oauthClientMetadataUrl", err.Error())
		}
	}
	if m.Face != nil {
		checkMs(ps, "mcp.face.sessionIdleMs", int64(m.Face.SessionIdleMs))
		if m.Face.MaxSessions < 0 {
			ps.add("mcp.face.maxSessions", "must not be negative")
		}
	}
	if m.Registry != nil && m.Registry.URL != "" {
		if err := CheckRegistryURL(m.Registry.URL); err != nil {
			ps.add("mcp.registry.url", err.Error())
		}
	}
	if m.Tracing != nil {
		switch m.Tracing.Protocol {
		case "", TracingHTTP, TracingGRPC:
		default:
			ps.add("mcp.tracing.protocol", fmt.Sprintf("must be %q (the default) or %q", TracingHTTP, TracingGRPC))
		}
	}
	validatePolicy(ps, m.Policy)
	if a := m.Audit; a != nil {
		if a.MaxFileBytes != 0 && a.MaxFileBytes < 4096 {
			ps.add("mcp.audit.maxFileBytes", "must be at least 4096 (0 is the default, 10 MiB)")
		}
		if a.MaxFiles < 0 || a.MaxFiles > 100 {
			ps.add("mcp.audit.maxFiles", "must be between 1 and 100 (0 is the default, 5)")
		}
	}
	switch m.Names {
	case "", NamesReadable, NamesHashed:
	default:
		ps.add("mcp.names", fmt.Sprintf("must be %q (server_tool, the default) or %q (mcp_server_tool_hash)", NamesReadable, NamesHashed))
	}
	for _, name := range slices.Sorted(maps.Keys(m.Servers)) {
		p := KeyPath("mcp.servers", name)
		if !validName(name) {
			ps.add(p, msgName)
		}
		validateServer(ps, p, m.Servers[name])
	}
	for _, name := range slices.Sorted(maps.Keys(m.Profiles)) {
		p := KeyPath("mcp.profiles", name)
		if !validName(name) {
			ps.add(p, msgName)
		}
		validateProfile(ps, p, m.Profiles[name], m.Servers)
		validateGates(ps, p, m.Profiles[name], f.Team)
	}
	validateTeam(ps, f.Team)
}

func validateServer(ps *problems, p string, s Server) {
	at := func(key string) string { return KeyPath(p, key) }
	switch s.Type {
	case "":
		ps.add(at("type"), "is required: stdio, http or sse")
	case TypeStdio:
		if s.Command == "" {
			ps.add(at("command"), "is required for a stdio server")
		}
		notFor(ps, p, s.Type, map[string]bool{
			"url": s.URL != "", "headers": len(s.Headers) > 0,
			"bearerTokenEnvVar": s.BearerTokenEnvVar != "", "oauth": s.OAuth != nil,
		})
	case TypeHTTP, TypeSSE:
		if s.URL == "" {
			ps.add(at("url"), "is required for "+article(s.Type)+" "+s.Type+" server")
		}
		notFor(ps, p, s.Type, map[string]bool{
			"command": s.Command != "", "args": len(s.Args) > 0,
			"cwd": s.Cwd != "", "env": len(s.Env) > 0, "sandbox": s.Sandbox != nil,
		})
	default:
		ps.add(at("type"), fmt.Sprintf("unknown type %q: want stdio, http or sse", shorten(s.Type)))
	}

	// The remaining checks do not depend on the type, so that a server of the
	// wrong type still gets all its problems reported.
	checkNoNUL(ps, at("command"), s.Command)
	checkNoNUL(ps, at("cwd"), s.Cwd)
	for i, a := range s.Args {
		checkNoNUL(ps, IndexPath(at("args"), i), a)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		kp := KeyPath(at("env"), k)
		if !ValidVarName(k) {
			ps.add(kp, msgVarName)
		}
		switch r := s.Env[k]; {
		case r.Value != nil && r.Env != "":
			ps.add(kp, "has both env and value: keep one")
		case r.Value != nil:
			checkNoNUL(ps, KeyPath(kp, "value"), *r.Value)
		default:
			checkVar(ps, KeyPath(kp, "env"), r.Env)
		}
	}
	if s.URL != "" {
		if err := checkURLTemplate(s.URL); err != nil {
			ps.add(at("url"), err.Error())
		}
	}
	validateHeaders(ps, at("headers"), s)
	if s.BearerTokenEnvVar != "" && !ValidVarName(s.BearerTokenEnvVar) {
		ps.add(at("bearerTokenEnvVar"), msgVarName)
	}
	checkTools(ps, at("enabledTools"), s.EnabledTools)
	checkTools(ps, at("disabledTools"), s.DisabledTools)
	if len(s.EnabledTools) > 0 && len(s.DisabledTools) > 0 {
		ps.add(at("disabledTools"), "cannot be combined with enabledTools: list the tools to keep or the tools to drop, not both")
	}
	checkMs(ps, at("startupTimeoutMs"), int64(s.StartupTimeoutMs))
	checkMs(ps, at("callTimeoutMs"), int64(s.CallTimeoutMs))
	checkMs(ps, at("keepAliveMs"), int64(s.KeepAliveMs))
	if s.KeepAliveMs > 0 && s.KeepAliveMs < minKeepAliveMs {
		ps.add(at("keepAliveMs"), "is too small (at least "+strconv.Itoa(minKeepAliveMs)+")")
	}
	checkMs(ps, at("idleStopMs"), int64(s.IdleStopMs))
	checkMs(ps, at("installTimeoutMs"), int64(s.InstallTimeoutMs))
	switch s.Start {
	case "", StartEager, StartOnDemand:
	default:
		ps.add(at("start"), fmt.Sprintf("unknown start mode %q: want %s or %s", shorten(s.Start), StartEager, StartOnDemand))
	}
	switch s.Instance {
	case "", InstanceShared, InstancePerSession:
	default:
		ps.add(at("instance"), fmt.Sprintf("unknown instance mode %q: want shared or per-session", shorten(s.Instance)))
	}
	if s.MaxDescriptionChars < 0 {
		ps.add(at("maxDescriptionChars"), "must not be negative")
	}
	if s.MaxResultBytes < 0 {
		ps.add(at("maxResultBytes"), "must not be negative")
	}
	if s.ProtocolVersion != "" && !slices.Contains(SessionProtocolVersions, s.ProtocolVersion) {
		ps.add(at("protocolVersion"), fmt.Sprintf("unknown or not pinnable %q: want one of %s, or leave it out to negotiate the newest", shorten(s.ProtocolVersion), strings.Join(SessionProtocolVersions, ", ")))
	}
	if s.MaxRestartAttempts != nil && *s.MaxRestartAttempts < 0 {
		ps.add(at("maxRestartAttempts"), "must not be negative")
	}
	if s.OAuth != nil {
		validateOAuth(ps, at("oauth"), *s.OAuth)
	}
	if s.Sandbox != nil {
		validateSandbox(ps, at("sandbox"), *s.Sandbox)
	}
}

// notFor reports the keys that are set but belong to another server type.
func notFor(ps *problems, p, typ string, set map[string]bool) {
	for _, key := range slices.Sorted(maps.Keys(set)) {
		if set[key] {
			ps.add(KeyPath(p, key), "is not allowed for "+article(typ)+" "+typ+" server")
		}
	}
}

func validateHeaders(ps *problems, p string, s Server) {
	first := make(map[string]string) // by lower-case name
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		hp := KeyPath(p, name)
		if !validHeaderName(name) {
			ps.add(hp, "is not a valid HTTP header name")
		}
		// HTTP ignores case, so two spellings would silently become one.
		lower := strings.ToLower(name)
		if prev, ok := first[lower]; ok {
			ps.add(hp, fmt.Sprintf("repeats header %q (header names ignore case)", shorten(prev)))
		} else {
			first[lower] = name
		}
		if s.BearerTokenEnvVar != "" && strings.EqualFold(name, "Authorization") {
			ps.add(hp, "cannot be combined with bearerTokenEnvVar, which sets Authorization")
		}
		v := s.Headers[name]
		switch {
		case v.Env != "" && v.Text != "":
			ps.add(hp, "set either a string or "+refForm+", not both")
		case v.Env != "":
			checkVar(ps, KeyPath(hp, "env"), v.Env)
		default:
			if err := checkPlaceholders(v.Text); err != nil {
				ps.add(hp, err.Error())
			}
			if strings.ContainsFunc(v.Text, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
				ps.add(hp, "contains a line break or control character")
			}
		}
	}
}

func validateOAuth(ps *problems, p string, o OAuth) {
	at := func(key string) string { return KeyPath(p, key) }
	if o.ClientSecret != nil {
		if o.ClientSecret.Value != nil {
			ps.add(at("clientSecret"), "a client secret is named, never written: want "+refForm)
		}
		checkVar(ps, KeyPath(at("clientSecret"), "env"), o.ClientSecret.Env)
		if o.ClientID == "" {
			ps.add(at("clientSecret"), "needs clientId")
		}
	}
	validateGrant(ps, p, o)
	for key, u := range map[string]string{"authUrl": o.AuthURL, "tokenUrl": o.TokenURL, "idpTokenUrl": o.IDPTokenURL} {
		if u == "" {
			continue
		}
		if err := CheckOAuthURL(u); err != nil {
			ps.add(at(key), err.Error())
		}
	}
	// Without discovery both endpoints are needed; with it, neither.
	if (o.AuthURL == "") != (o.TokenURL == "") {
		ps.add(p, "set both authUrl and tokenUrl, or neither to use discovery")
	}
	for i, s := range o.Scopes {
		if !validScope(s) {
			ps.add(IndexPath(at("scopes"), i), "is not a valid OAuth scope")
		}
	}
}

// validScope is RFC 6749 §3.3's rule: a scope is a non-empty run of
// printable ASCII other than space, '"' and '\\'.
func validScope(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' })
}

func validateProfile(ps *problems, p string, pr Profile, servers map[string]Server) {
	for i, name := range pr.Servers {
		if _, ok := servers[name]; !ok {
			ps.add(IndexPath(KeyPath(p, "servers"), i), fmt.Sprintf("unknown server %q", shorten(name)))
		}
	}
	switch pr.Naming {
	case "", NamingPlexus:
	case NamingBare:
		// A bare profile passes names through unchanged, which is only
		// collision-free with one server (R-SES-1a).
		if len(pr.Servers) != 1 {
			ps.add(KeyPath(p, "naming"), fmt.Sprintf(`"bare" needs exactly one server, got %d`, len(pr.Servers)))
		}
	default:
		ps.add(KeyPath(p, "naming"), fmt.Sprintf("unknown naming %q: want plexus or bare", shorten(pr.Naming)))
	}
}

func checkVar(ps *problems, p, name string) {
	switch {
	case name == "":
		ps.add(p, msgVarRequired)
	case !ValidVarName(name):
		// Not quoted: people paste the secret where its name belongs.
		ps.add(p, msgVarName)
	}
}

func checkMs(ps *problems, p string, v int64) {
	switch {
	case v < 0:
		ps.add(p, "must not be negative")
	case v > maxMs:
		ps.add(p, "is too large (at most "+strconv.FormatInt(maxMs, 10)+")")
	}
}

func checkTools(ps *problems, p string, tools []string) {
	for i, t := range tools {
		if t == "" {
			ps.add(IndexPath(p, i), "is empty: want a tool name")
		}
	}
}

// checkNoNUL refuses what exec would refuse later, with a worse message.
func checkNoNUL(ps *problems, p, s string) {
	if strings.IndexByte(s, 0) >= 0 {
		ps.add(p, "contains a NUL byte")
	}
}

func article(typ string) string {
	if typ == TypeStdio {
		return "a"
	}
	return "an" // http, sse
}

// validName is the rule for server and profile names (R-CFG-2):
// ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$.
func validName(s string) bool {
	return len(s) >= 1 && len(s) <= 32 && isAlnum(s[0]) && plainKey(s)
}

// validHeaderName is RFC 9110's token: the characters a field name may hold.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !isAlnum(c) && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
