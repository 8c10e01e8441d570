package config

import (
	"slices"
	"strings"
	"time"
)

// File is the whole of extensions.json.
//
// Revision counts the daemon's saves; an edit based on an older revision is
// refused. It is not user configuration, but it lives in the file so that the
// file and its revision can never diverge.
type File struct {
	Revision int64 `json:"revision"`
	MCP      MCP   `json:"mcp"`
	// Team, if set, is team mode's identity (team.go); nil is the
	// one-machine daemon.
	Team *Team `json:"team,omitempty"`
}

// MCP is the "mcp" section.
type MCP struct {
	// Enabled switches the whole section; nil means true.
	Enabled       *bool `json:"enabled,omitempty"`
	RetryMs       int   `json:"retryMs,omitempty"`
	CallTimeoutMs int   `json:"callTimeoutMs,omitempty"`
	// OAuthClientMetadataURL is the https URL where the user hosts
	// Plexus's OAuth client ID metadata document (MCP 2025-11-25): logins
	// at an authorization server that supports such documents use it as
	// the client_id instead of registering.
	OAuthClientMetadataURL string `json:"oauthClientMetadataUrl,omitempty"`

	Servers  map[string]Server  `json:"servers,omitempty"`
	Face     *Face              `json:"face,omitempty"`
	Profiles map[string]Profile `json:"profiles,omitempty"`
	// Registry is where `plexus search` and the catalog look for servers;
	// nil is the official MCP registry.
	Registry *Registry `json:"registry,omitempty"`
	// Names is how tools are named on the face: NamesReadable (""), or
	// NamesHashed, the seeds' mcp_<server>_<tool>_<hash>.
	Names string `json:"names,omitempty"`
	// Tracing, if set and enabled, exports OpenTelemetry traces over OTLP
	// (docs/tracing.md); nil is off. Applied at once when it changes.
	Tracing *Tracing `json:"tracing,omitempty"`
	// Policy allows, refuses, or holds for approval the tool calls, and
	// bounds their rate (policy.go); nil allows every call.
	Policy *Policy `json:"policy,omitempty"`
	// Audit bounds and exports the audit log (docs/audit.md); nil is on
	// with the default bounds. Read when the daemon starts.
	Audit *Audit `json:"audit,omitempty"`
}

// Audit is the "mcp.audit" section.
type Audit struct {
	// Enabled switches the audit log; nil means true.
	Enabled *bool `json:"enabled,omitempty"`
	// MaxFileBytes rotates audit.jsonl at this size; MaxFiles is how many
	// files are kept, the live one included (0: audit's defaults, 10 MiB
	// and 5).
	MaxFileBytes int64 `json:"maxFileBytes,omitempty"`
	MaxFiles     int   `json:"maxFiles,omitempty"`
	// OTLP also exports every record as an OpenTelemetry log record, over
	// mcp.tracing.protocol to where the OTEL_EXPORTER_OTLP_* variables say.
	OTLP bool `json:"otlp,omitempty"`
}

// AuditOn reports whether the audit log is on (the default).
func (m MCP) AuditOn() bool {
	return m.Audit == nil || m.Audit.Enabled == nil || *m.Audit.Enabled
}

// Tracing is the "mcp.tracing" section. Where traces go (endpoint,
// headers, timeout) is set by the standard OTEL_EXPORTER_OTLP_*
// environment variables, which every OpenTelemetry exporter reads.
type Tracing struct {
	Enabled bool `json:"enabled,omitempty"`
	// Protocol is the OTLP transport: TracingHTTP ("", the default) or
	// TracingGRPC.
	Protocol string `json:"protocol,omitempty"`
}

// OTLP transports of mcp.tracing.protocol, named as
// OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	TracingHTTP = "http/protobuf"
	TracingGRPC = "grpc"
)

// Naming schemes of mcp.names.
const (
	// NamesReadable offers a tool as server_tool, with a short suffix
	// only on a collision or past 64 characters; a tool keeps the name it
	// got first (pins). The default.
	NamesReadable = "readable"
	// NamesHashed offers every tool as mcp_<server>_<tool>_<hash>.
	NamesHashed = "hashed"
)

// DefaultRegistryURL is the official MCP registry.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// Registry is the MCP registry the daemon searches (its REST API under
// /v0.1): the official one, or a company's own.
type Registry struct {
	// URL is the registry's base URL, without /v0.1; "" is the official
	// one.
	URL string `json:"url,omitempty"`
}

// RegistryURL is the registry's base URL (the official one if unset),
// without a trailing slash.
func (m MCP) RegistryURL() string {
	if m.Registry == nil || m.Registry.URL == "" {
		return DefaultRegistryURL
	}
	return strings.TrimRight(m.Registry.URL, "/")
}

// Server types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Instance modes.
const (
	InstanceShared     = "shared"
	InstancePerSession = "per-session"
)

// Start modes.
const (
	StartEager    = "eager"
	StartOnDemand = "onDemand"
)

// Profile naming modes.
const (
	NamingPlexus = "plexus"
	NamingBare   = "bare"
)

// Server is one entry of mcp.servers.
type Server struct {
	Type string `json:"type"`

	// stdio
	Command string         `json:"command,omitempty"`
	Args    []string       `json:"args,omitempty"`
	Cwd     string         `json:"cwd,omitempty"`
	Env     map[string]Ref `json:"env,omitempty"`

	// http, sse
	URL               string           `json:"url,omitempty"`
	Headers           map[string]Value `json:"headers,omitempty"`
	BearerTokenEnvVar string           `json:"bearerTokenEnvVar,omitempty"`

	Enabled          *bool    `json:"enabled,omitempty"`
	EnabledTools     []string `json:"enabledTools,omitempty"`
	DisabledTools    []string `json:"disabledTools,omitempty"`
	StartupTimeoutMs int      `json:"startupTimeoutMs,omitempty"`
	CallTimeoutMs    int      `json:"callTimeoutMs,omitempty"`
	// KeepAliveMs is the interval of the health check of a running server
	// (ping, or server/discover for a 2026-07-28 server); 0 means
	// DefaultKeepAliveMs.
	KeepAliveMs int    `json:"keepAliveMs,omitempty"`
	Instance    string `json:"instance,omitempty"`
	// Start is when a shared instance is started: StartEager at the
	// daemon's start, StartOnDemand at its first use once its catalog is
	// known (its first start is eager, to learn it). "" is the default:
	// on demand for stdio, eager for a remote server, which runs no
	// process of ours.
	Start string `json:"start,omitempty"`
	// IdleStopMs stops a shared instance nothing used for this long (it
	// is started again by its next use); 0 means DefaultIdleStopMs for a
	// server started on demand, never for an eager one.
	IdleStopMs int `json:"idleStopMs,omitempty"`
	// InstallTimeoutMs bounds the first start of a server run by a
	// package runner (npx, uvx, …), which may download it; 0 means
	// DefaultInstallTimeoutMs. Later starts have startupTimeoutMs.
	InstallTimeoutMs int   `json:"installTimeoutMs,omitempty"`
	MaxResultBytes   int64 `json:"maxResultBytes,omitempty"`
	// MaxDescriptionChars bounds each tool's description, in characters
	// (0: catalog's default, high enough for real servers' tools).
	MaxDescriptionChars int    `json:"maxDescriptionChars,omitempty"`
	MaxRestartAttempts  *int   `json:"maxRestartAttempts,omitempty"`
	OAuth               *OAuth `json:"oauth,omitempty"`
	// ProtocolVersion pins the server to a session-era version
	// (SessionProtocolVersions): Plexus then initializes with it (a
	// streamable HTTP server is asked once, apart, whether it speaks MCP
	// 2026-07-28 of its own, for a bare profile to offer that era or not). For servers whose tools make server→client
	// requests mid-call, which MCP 2026-07-28 forbids. "" negotiates the
	// newest version both sides support.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Sandbox, if set, confines a stdio server (docs/sandbox.md).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// AuditPayloads records the arguments and results of this server's
	// calls in the audit log, secrets redacted; by default only their
	// sizes are.
	AuditPayloads bool `json:"auditPayloads,omitempty"`
	// NpxDirect, when false, keeps npm's `npm exec` process beside a server
	// run by npx. By default (nil) Plexus has npm install the package, then
	// starts its bin without that wrapper (docs/ondemand.md).
	NpxDirect *bool `json:"npxDirect,omitempty"`
}

// SessionProtocolVersions are the session-era MCP versions a server may be
// pinned to, newest first.
var SessionProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// IsEnabled reports whether the server is switched on (the default).
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Ref names a secret: { "env": "VAR" }. It resolves from the managed
// environment first, then the daemon's process environment.
//
// An env entry of a stdio server may instead hold a plain value,
// { "value": "TEXT" }: a setting that is not secret (a path, DEBUG=1, an
// empty string), kept visibly in the configuration and passed as written.
// Exactly one of Env and Value is set; Value only ever in env.
type Ref struct {
	Env   string  `json:"env,omitempty"`
	Value *string `json:"value,omitempty"`
}

// PlainValue returns a plain env value, { "value": v }.
func PlainValue(v string) Ref { return Ref{Value: &v} }

// IsPlain reports whether the entry holds a plain value rather than a
// reference.
func (r Ref) IsPlain() bool { return r.Value != nil }

// Value is a header value: either a reference { "env": "VAR" } or a string
// that may carry $VAR / ${VAR} placeholders. Exactly one of Env and Text is set.
type Value struct {
	Env  string
	Text string
}

// OAuth holds a server's OAuth settings: a pre-registered client, the
// endpoints of a server without discovery, and the grant by which the
// daemon obtains tokens without a person, if it does. Secrets are named
// (environment or secret store), never written here; files are absolute
// paths the platform keeps current.
type OAuth struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret *Ref     `json:"clientSecret,omitempty"`
	AuthURL      string   `json:"authUrl,omitempty"`
	TokenURL     string   `json:"tokenUrl,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// Grant is one of the Grant* constants; "" is a person's login
	// (authorization code with PKCE).
	Grant string `json:"grant,omitempty"`
	// AuthMethod forces the token endpoint's client authentication:
	// client_secret_basic, client_secret_post or private_key_jwt.
	AuthMethod string `json:"authMethod,omitempty"`
	// PrivateKey (a secret holding a PEM key) or PrivateKeyFile signs
	// private_key_jwt client assertions (RFC 7523 §2.2).
	PrivateKey     *Ref   `json:"privateKey,omitempty"`
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	SigningAlg     string `json:"signingAlg,omitempty"`
	// TokenFile holds the workload's JWT for GrantJWTBearer.
	TokenFile string `json:"tokenFile,omitempty"`
	// The enterprise identity provider of GrantTokenExchange.
	IDPTokenURL     string `json:"idpTokenUrl,omitempty"`
	IDPClientID     string `json:"idpClientId,omitempty"`
	IDPClientSecret *Ref   `json:"idpClientSecret,omitempty"`
	IDTokenFile     string `json:"idTokenFile,omitempty"`
}

// The grants of OAuth.Grant.
const (
	GrantClientCredentials = "client_credentials" // machine to machine
	GrantJWTBearer         = "jwt_bearer"         // workload identity (RFC 7523 §2.1)
	GrantTokenExchange     = "token_exchange"     // enterprise-managed (RFC 8693, ID-JAG)
)

// Face configures Plexus as an MCP server.
type Face struct {
	AllowWrite        bool `json:"allowWrite,omitempty"`
	AllowExternalCall bool `json:"allowExternalCall,omitempty"`
	// SessionIdleMs ends a client's protocol session after this long
	// without a request (0: DefaultSessionIdleMs); MaxSessions bounds the
	// live sessions of each profile (0: DefaultMaxSessions): one more
	// initialize takes the place of the session idle longest, and is
	// answered 503 with Retry-After only while every one is busy.
	SessionIdleMs int `json:"sessionIdleMs,omitempty"`
	MaxSessions   int `json:"maxSessions,omitempty"`
}

// SessionIdle is how long an idle face session lives.
func (f *Face) SessionIdle() time.Duration {
	if f == nil || f.SessionIdleMs <= 0 {
		return DefaultSessionIdleMs * time.Millisecond
	}
	return time.Duration(f.SessionIdleMs) * time.Millisecond
}

// SessionCap is how many sessions one profile of the face holds at once.
func (f *Face) SessionCap() int {
	if f == nil || f.MaxSessions <= 0 {
		return DefaultMaxSessions
	}
	return f.MaxSessions
}

// Profile is a named composition for the MCP face and sessions.
type Profile struct {
	Servers   []string `json:"servers,omitempty"`
	Naming    string   `json:"naming,omitempty"` // "plexus" (default) or "bare"
	MetaTools bool     `json:"metaTools,omitempty"`
	// ControlTools offers Plexus's own tools (plexus_status, …) beside the
	// servers'; nil means yes, except in a bare profile, which passes its
	// server through unchanged.
	ControlTools *bool `json:"controlTools,omitempty"`
	// Users and Groups gate the profile in team mode: a caller whose user
	// claim is one of Users, or whose groups claim holds one of Groups,
	// may use it; with neither set, every caller of the team may.
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// Gated reports whether the profile names who may use it.
func (p Profile) Gated() bool { return len(p.Users) > 0 || len(p.Groups) > 0 }

// Admits reports whether a caller, by user and groups, passes the
// profile's gates; an ungated profile admits everyone.
func (p Profile) Admits(user string, groups []string) bool {
	if !p.Gated() {
		return true
	}
	if user != "" && slices.Contains(p.Users, user) {
		return true
	}
	for _, g := range groups {
		if g != "" && slices.Contains(p.Groups, g) {
			return true
		}
	}
	return false
}

// Defaults.
const (
	DefaultRetryMs            = 30000
	DefaultCallTimeoutMs      = 60000
	DefaultStartupTimeoutMs   = 30000
	DefaultMaxResultBytes     = 1 << 20
	DefaultMaxRestartAttempts = 5
	DefaultSessionIdleMs      = 30 * 60 * 1000
	DefaultMaxSessions        = 1000
	DefaultKeepAliveMs        = 30000
	DefaultIdleStopMs         = 5 * 60 * 1000
	DefaultInstallTimeoutMs   = 5 * 60 * 1000
)

// OnDemand reports whether the server's shared instance is started at its
// first use rather than at the daemon's start (Start).
func (s Server) OnDemand() bool {
	switch s.Start {
	case StartEager:
		return false
	case StartOnDemand:
		return true
	}
	return s.Type == TypeStdio
}

// StartsNpxDirect reports whether a server run by npx starts without npm's
// wrapper (NpxDirect).
func (s Server) StartsNpxDirect() bool { return s.NpxDirect == nil || *s.NpxDirect }

// IdleStopAfterMs is how long the server's shared instance may go unused
// before it is stopped (IdleStopMs); 0 is never.
func (s Server) IdleStopAfterMs() int {
	if s.IdleStopMs > 0 {
		return s.IdleStopMs
	}
	if s.OnDemand() {
		return DefaultIdleStopMs
	}
	return 0
}
