package config

// File is the whole of extensions.json.
//
// Revision counts the daemon's saves; an edit based on an older revision is
// refused. It is not user configuration, but it lives in the file so that the
// file and its revision can never diverge.
type File struct {
	Revision int64 `json:"revision"`
	MCP      MCP   `json:"mcp"`
}

// MCP is the "mcp" section.
type MCP struct {
	// Enabled switches the whole section; nil means true.
	Enabled       *bool `json:"enabled,omitempty"`
	RetryMs       int   `json:"retryMs,omitempty"`
	CallTimeoutMs int   `json:"callTimeoutMs,omitempty"`

	Servers  map[string]Server  `json:"servers,omitempty"`
	Face     *Face              `json:"face,omitempty"`
	Profiles map[string]Profile `json:"profiles,omitempty"`
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

	Enabled            *bool    `json:"enabled,omitempty"`
	EnabledTools       []string `json:"enabledTools,omitempty"`
	DisabledTools      []string `json:"disabledTools,omitempty"`
	StartupTimeoutMs   int      `json:"startupTimeoutMs,omitempty"`
	CallTimeoutMs      int      `json:"callTimeoutMs,omitempty"`
	Instance           string   `json:"instance,omitempty"`
	MaxResultBytes     int64    `json:"maxResultBytes,omitempty"`
	MaxRestartAttempts *int     `json:"maxRestartAttempts,omitempty"`
	OAuth              *OAuth   `json:"oauth,omitempty"`
	// ProtocolVersion pins the server to a session-era version
	// (SessionProtocolVersions): Plexus then skips server/discover and
	// initializes with it. For servers whose tools make server→client
	// requests mid-call, which MCP 2026-07-28 forbids. "" negotiates the
	// newest version both sides support.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Sandbox, if set, confines a stdio server (docs/sandbox.md).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// SessionProtocolVersions are the session-era MCP versions a server may be
// pinned to, newest first.
var SessionProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// IsEnabled reports whether the server is switched on (the default).
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Ref names a secret: { "env": "VAR" }. It resolves from the managed
// environment first, then the daemon's process environment.
type Ref struct {
	Env string `json:"env"`
}

// Value is a header value: either a reference { "env": "VAR" } or a string
// that may carry $VAR / ${VAR} placeholders. Exactly one of Env and Text is set.
type Value struct {
	Env  string
	Text string
}

// OAuth holds manual OAuth settings for servers without discovery.
type OAuth struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret *Ref     `json:"clientSecret,omitempty"`
	AuthURL      string   `json:"authUrl,omitempty"`
	TokenURL     string   `json:"tokenUrl,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
}

// Face configures Plexus as an MCP server.
type Face struct {
	AllowWrite        bool `json:"allowWrite,omitempty"`
	AllowExternalCall bool `json:"allowExternalCall,omitempty"`
}

// Profile is a named composition for the MCP face and sessions.
type Profile struct {
	Servers   []string `json:"servers,omitempty"`
	Naming    string   `json:"naming,omitempty"` // "plexus" (default) or "bare"
	MetaTools bool     `json:"metaTools,omitempty"`
}

// Defaults.
const (
	DefaultRetryMs            = 30000
	DefaultCallTimeoutMs      = 60000
	DefaultStartupTimeoutMs   = 30000
	DefaultMaxResultBytes     = 1 << 20
	DefaultMaxRestartAttempts = 5
)
