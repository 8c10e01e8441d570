// Package apitype holds the wire structs of the daemon's settings API:
// requests, responses, errors and events. It has no logic and imports nothing
// of Plexus, so that every front end can depend on it alone.
package apitype

import (
	"encoding/json"
	"time"
)

// APIVersion is the path prefix of every route.
const APIVersion = "/v1"

// Headers used by the API.
const (
	// HeaderIfMatch carries the revision a write is based on; a write based
	// on a stale revision is refused with 409 and CodeStale.
	HeaderIfMatch = "If-Match"
	// HeaderETag carries the revision a response was read at.
	HeaderETag = "ETag"
	// HeaderClientScope names, on each MCP 2026-07-28 request `plexus
	// mcp` forwards to the face, the bridge process it came through (a
	// random value of its own): the one editor session such a client has,
	// which a rule that asks once per session approves for (host/scope.go).
	HeaderClientScope = "X-Plexus-Client-Scope"
)

// Error is the one error shape of the API: every non-2xx response has it.
type Error struct {
	Err ErrorBody `json:"error"`
}

// ErrorBody describes what went wrong and what to do next.
type ErrorBody struct {
	// Code is a stable machine-readable word, one of the Code* constants.
	Code string `json:"code"`
	// Message says what went wrong, for people.
	Message string `json:"message"`
	// Hint says what to do next, when there is something to do.
	Hint string `json:"hint,omitempty"`
	// Problems lists every validation problem, each with its key path.
	Problems []Problem `json:"problems,omitempty"`
	// Revision is the current revision, on a conflict.
	Revision int64 `json:"revision,omitempty"`
}

// Problem is one validation problem at a key path such as
// "mcp.servers.docs.url".
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error codes.
const (
	CodeBadRequest   = "bad_request"    // 400: malformed request or invalid config
	CodeUnauthorized = "unauthorized"   // 401/403: identity check failed
	CodeNotFound     = "not_found"      // 404
	CodeConflict     = "conflict"       // 409: the server could not be started, or already exists
	CodeStale        = "stale_revision" // 409: the edit is based on a stale revision
	CodeUnavailable  = "unavailable"    // 503: server not ready
	CodeTimeout      = "timeout"        // 504: upstream call timed out
	CodeUpstream     = "upstream"       // 502: upstream protocol error
	CodeInternal     = "internal"       // 500
	CodeNoSpace      = "no_space"       // 507: the disk holding the daemon's files is full
	CodeTooLarge     = "too_large"      // 413
)

// Server states: the one vocabulary of a server's lifecycle, on the wire
// and in the supervisor that drives it.
const (
	StateDisabled = "disabled"
	StateStarting = "starting"
	StateReady    = "ready"
	StateFailed   = "failed"
	StateBackoff  = "backoff"
	StateStopped  = "stopped"
	// StateNeedsLogin: a remote server whose OAuth login is over (none
	// yet, or a refused token that no refresh mends). It is not restarted
	// or probed until a login (plexus login NAME); calls fail at once
	// saying so.
	StateNeedsLogin = "needs-login"
	// StateIdle: a server started on demand that is not running — stopped
	// after its idle time, or not started yet — whose catalog is known
	// and listed; its next use starts it. Not a failure.
	StateIdle = "idle"
	// StateWaking: a server being started by a use while it was idle; the
	// use waits for it.
	StateWaking = "waking"
)

// Status is GET /v1/status.
type Status struct {
	Version        string    `json:"version"`
	PID            int       `json:"pid"`
	Home           string    `json:"home"`
	StartedAt      time.Time `json:"startedAt"`
	Revision       int64     `json:"revision"`
	SecretRevision int64     `json:"secretRevision"`
	// HTTPAddr is the loopback address of the token-guarded endpoints
	// (metrics at /metrics), "" if the daemon listens on none.
	HTTPAddr string         `json:"httpAddr,omitempty"`
	Servers  []ServerStatus `json:"servers"`
	// Sandbox describes what this kernel offers sandboxed servers, one
	// feature a line (Landlock ABI, namespaces, seccomp, cgroup v2).
	Sandbox []string `json:"sandbox,omitempty"`
	// SettingsFile is set while extensions.json holds a hand edit the
	// daemon has not applied, read as the status is.
	SettingsFile *SettingsFile `json:"settingsFile,omitempty"`
}

// SettingsFile is a hand edit of extensions.json not applied yet: until
// `plexus reload` applies it (or `plexus reload --discard` drops it), the
// daemon runs the settings it last read, and refuses to save over it.
type SettingsFile struct {
	Path string `json:"path"`
	// Problems are why the edited file cannot be applied as it is, as
	// `plexus reload` reports them: malformed JSON with its line and
	// column, else each problem at its key path. Empty when a reload
	// would apply it.
	Problems []string `json:"problems,omitempty"`
}

// ServerList is GET /v1/servers.
type ServerList struct {
	Revision int64 `json:"revision"`
	// EventSeq is the Seq of the newest event the list is as new as (see
	// ServerStatus.EventSeq): a server missing from it that an event with
	// a higher Seq announced was added after it was read.
	EventSeq int64          `json:"eventSeq"`
	Servers  []ServerStatus `json:"servers"`
}

// ServerStatus is one server's state, sanitized: no secret value ever
// appears in it.
type ServerStatus struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Enabled bool   `json:"enabled"`
	State   string `json:"state"`
	// Tools counts the tools the server contributes after filtering.
	Tools     int `json:"tools"`
	Resources int `json:"resources"`
	Prompts   int `json:"prompts"`
	// URL is the sanitized URL: query values redacted.
	URL string `json:"url,omitempty"`
	// Command is the argv of a stdio server.
	Command []string `json:"command,omitempty"`
	// HeaderNames lists header names only, never values.
	HeaderNames     []string `json:"headerNames,omitempty"`
	EnvNames        []string `json:"envNames,omitempty"`
	ProtocolVersion string   `json:"protocolVersion,omitempty"`
	// RunsOn is, in a team, the replica that runs this stdio server when
	// it is not the one answering (docs/team.md); "" otherwise.
	RunsOn string `json:"runsOn,omitempty"`
	// Sandbox summarizes a sandboxed server's confinement ("network none;
	// write ~/notes"); "" for a server that is not sandboxed.
	Sandbox     string     `json:"sandbox,omitempty"`
	ServerInfo  string     `json:"serverInfo,omitempty"`
	PID         int        `json:"pid,omitempty"`
	Since       time.Time  `json:"since"`
	LastError   string     `json:"lastError"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	ExitCode    *int       `json:"exitCode,omitempty"`
	// HTTPStatus is the HTTP status behind the last error of a remote server.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// Restarts counts automatic restarts since the server was configured.
	Restarts int `json:"restarts,omitempty"`
	// NextTryAt is when the next restart or probe is due, in state backoff
	// or failed.
	NextTryAt *time.Time `json:"nextTryAt,omitempty"`
	// CrashLooping is set while the server is parked after too many failed
	// restarts in a row; it is tried again at NextTryAt.
	CrashLooping bool     `json:"crashLooping,omitempty"`
	Stderr       []string `json:"stderr,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	// NeedsApproval is set while the server is not started because its
	// definition (command, args, environment names, URL, headers) is not
	// one a person approved (R-CAT-6); Approval says why.
	NeedsApproval bool `json:"needsApproval,omitempty"`
	// Installing is set while a start (state starting or waking) waits
	// for npm to install the server's package: npx's own word that the
	// package was not in its cache, or a newer version is due. Cleared
	// when the state changes.
	Installing bool      `json:"installing,omitempty"`
	Approval   *Approval `json:"approval,omitempty"`
	// Held lists the tools held back because their definition changed
	// since a person accepted it (R-CAT-6): they are neither listed nor
	// callable until accepted. Tools does not count them.
	Held []HeldTool `json:"held,omitempty"`
	// Auth is set for a remote server that uses OAuth (R-AUTH-1): it asked
	// for authorization, or has oauth settings.
	Auth *AuthStatus `json:"auth,omitempty"`
	// EventSeq orders this status with the events of GET /v1/events: in
	// an event, it is the event's own Seq; in an answer (a list, a
	// write's result), it is the Seq of the newest event the status is as
	// new as. An event whose Seq is higher is newer than the answer; an
	// event whose Seq is not, older or the same, even when it arrives
	// after the answer (the two come on different connections).
	EventSeq int64 `json:"eventSeq"`
}

// AuthStatus is a remote server's OAuth state as shown to people: never a
// token or a client secret.
type AuthStatus struct {
	// NeedsLogin is set while the server cannot be reached until a person
	// logs in (plexus login NAME).
	NeedsLogin bool `json:"needsLogin,omitempty"`
	LoggedIn   bool `json:"loggedIn,omitempty"`
	// Issuer is the authorization server's issuer.
	Issuer string   `json:"issuer,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
	// ExpiresAt is when the access token expires; it is refreshed before.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Login is the state of a login in progress: "waiting" (for the
	// browser's redirect), "checking" (the login got its tokens and the
	// server is being reached with them: the login is done only once it
	// took them), "failed" (LoginError says why), or "".
	Login      string `json:"login,omitempty"`
	LoginError string `json:"loginError,omitempty"`
	// Reason says why a login is needed (with NeedsLogin).
	Reason string `json:"reason,omitempty"`
	// RefreshToken: the login holds a refresh token (or a grant obtains
	// new tokens), so Plexus renews it before ExpiresAt. A login without
	// one ends at ExpiresAt.
	RefreshToken bool `json:"refreshToken,omitempty"`
	// DPoP: the tokens are DPoP-bound (RFC 9449).
	DPoP bool `json:"dpop,omitempty"`
	// MoreScopes are scopes the server asked for (403 insufficient_scope)
	// that the login lacks: a new login asks for them.
	MoreScopes []string `json:"moreScopes,omitempty"`
}

// Settings is GET and PUT /v1/settings: the section-wide settings of mcp
// in extensions.json; 0 means the default. A PUT replaces both (send the
// revision read as If-Match) and answers with the saved settings.
type Settings struct {
	// Revision is the settings' revision; ignored in a PUT.
	Revision int64 `json:"revision"`
	// CallTimeoutMs is the request timeout of a tool call, unless a
	// server's own callTimeoutMs overrides it (default 60000).
	CallTimeoutMs int `json:"callTimeoutMs"`
	// RetryMs is the first retry interval of a failed server (default
	// 30000).
	RetryMs int `json:"retryMs"`
	// OAuthClientMetadataURL is the https URL of Plexus's OAuth client ID
	// metadata document, if the user hosts one: used as the client_id at
	// authorization servers that support such documents, before dynamic
	// registration. A PUT without it keeps it; "" removes it.
	OAuthClientMetadataURL *string `json:"oauthClientMetadataUrl,omitempty"`
	// Face holds the MCP face's gates; always set in an answer, and a PUT
	// without it keeps them as they are.
	Face *FaceSettings `json:"face,omitempty"`
	// Profiles are the face's named compositions (mcp.profiles); a PUT
	// without it (or with null) keeps them, an empty object removes them
	// all; an answer always has it.
	Profiles map[string]Profile `json:"profiles"`
	// Registry is the MCP registry `plexus search` and the catalog use;
	// always set in an answer, and a PUT without it keeps it.
	Registry *RegistrySettings `json:"registry,omitempty"`
	// Names is how clients see the servers' tools (mcp.names): "readable"
	// (server_tool, a short suffix only on a collision or past 64
	// characters; a tool keeps the name it got first) or "hashed"
	// (mcp_server_tool_hash). Always set in an answer; a PUT without it
	// keeps it.
	Names string `json:"names,omitempty"`
	// Tracing is mcp.tracing, the OpenTelemetry traces the daemon exports
	// (docs/tracing.md), applied at once when it changes; always set in an
	// answer, and a PUT without it keeps it.
	Tracing *TracingSettings `json:"tracing,omitempty"`
	// Policy is mcp.policy: the rules that allow, deny or hold for the
	// user's approval a tool call, and the rate limits per client. Always
	// set in an answer; a PUT without it keeps it, an empty one removes
	// it.
	Policy *PolicySettings `json:"policy,omitempty"`
	// Audit is mcp.audit's switches (docs/audit.md), read when the daemon
	// starts; always set in an answer, and a PUT without it keeps it. Its
	// bounds (maxFileBytes, maxFiles) are kept as the file has them.
	Audit *AuditSettings `json:"audit,omitempty"`
}

// AuditSettings turn the audit log off (on by default) and its export as
// OTLP logs on (off by default).
type AuditSettings struct {
	Enabled bool `json:"enabled"`
	OTLP    bool `json:"otlp"`
}

// PolicySettings are mcp.policy. Rules are tried in order, the first that
// matches a call deciding it (none: allowed); every limit that matches a
// call applies.
type PolicySettings struct {
	Rules  []PolicyRule `json:"rules"`
	Limits []RateLimit  `json:"limits"`
}

// PolicyRule matches calls by globs (*, ?, [a-z]; empty: any) over the
// tool's Plexus name, the client's name and the profile, and optionally
// by whether the tool is destructive by its annotations. Action is
// "allow", "deny", "askOncePerSession" or "askEveryCall".
type PolicyRule struct {
	Tool        string `json:"tool,omitempty"`
	Client      string `json:"client,omitempty"`
	Profile     string `json:"profile,omitempty"`
	Destructive *bool  `json:"destructive,omitempty"`
	Action      string `json:"action"`
}

// RateLimit allows each client at most Calls calls of the tools it
// matches in any WindowMs.
type RateLimit struct {
	Tool     string `json:"tool,omitempty"`
	Client   string `json:"client,omitempty"`
	Calls    int    `json:"calls"`
	WindowMs int    `json:"windowMs"`
}

// TracingSettings turn OpenTelemetry traces on (off by default) and pick
// the OTLP transport: "http/protobuf" (the default) or "grpc".
type TracingSettings struct {
	Enabled  bool   `json:"enabled"`
	Protocol string `json:"protocol,omitempty"`
}

// FaceSettings are the gates of Plexus as an MCP server, both off by
// default: AllowExternalCall offers the servers' tools, resources and
// prompts to clients (else only plexus_status and plexus_snapshot),
// AllowWrite the control-plane writes (plexus_restart, …).
type FaceSettings struct {
	AllowExternalCall bool `json:"allowExternalCall"`
	AllowWrite        bool `json:"allowWrite"`
	// SessionIdleMs ends a client's session after this long without a
	// request (0: 30 minutes); MaxSessions bounds each profile's live
	// sessions (0: 1,000).
	SessionIdleMs int `json:"sessionIdleMs,omitempty"`
	MaxSessions   int `json:"maxSessions,omitempty"`
}

// Profile is one named composition of the face: the servers it offers
// (empty: every server), its naming ("plexus" or "bare") and whether it
// offers meta-tools instead of the whole catalog.
type Profile struct {
	Servers   []string `json:"servers,omitempty"`
	Naming    string   `json:"naming,omitempty"`
	MetaTools bool     `json:"metaTools,omitempty"`
	// ControlTools offers plexus_status and plexus_snapshot beside the
	// servers' tools; unset: yes, except in a bare profile.
	ControlTools *bool `json:"controlTools,omitempty"`
	// Users and Groups gate the profile in team mode (mcp.profiles.NAME.users,
	// .groups).
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// UILogin answers POST /v1/ui/login: a one-time link that logs a browser
// into the daemon's web page. It is valid once, until ExpiresAt.
type UILogin struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// SuggestNameRequest is POST /v1/suggest/name: what a form knows of a
// server so far, its URL or its command line as typed in a shell.
type SuggestNameRequest struct {
	URL     string `json:"url,omitempty"`
	Command string `json:"command,omitempty"`
}

// SuggestedName answers SuggestNameRequest: the name the CLI's and the
// TUI's forms would suggest, or "" when nothing suggests one.
type SuggestedName struct {
	Name string `json:"name"`
}

// LoginRequest is POST /v1/servers/{name}/login: start an OAuth login.
type LoginRequest struct {
	// NoBrowser: the redirect will be pasted back with
	// POST /v1/servers/{name}/login/complete rather than reach the daemon's
	// loopback listener (it still listens, whichever comes first wins).
	NoBrowser bool `json:"noBrowser,omitempty"`
}

// LoginStart answers LoginRequest: the URL a person opens in a browser.
// Progress shows in ServerStatus.Auth (server events); the login is done
// when Auth.LoggedIn is set and Auth.Login is empty.
type LoginStart struct {
	Server  string `json:"server"`
	AuthURL string `json:"authUrl"`
	// RedirectURI is the daemon's loopback listener the browser returns to.
	RedirectURI string `json:"redirectUri"`
	// ExpiresAt is when the daemon stops waiting for this login.
	ExpiresAt time.Time `json:"expiresAt"`
	// Grant is set when no browser is involved: the daemon obtained the
	// token itself with this OAuth grant (client_credentials, jwt_bearer,
	// token_exchange), and AuthURL is empty.
	Grant string `json:"grant,omitempty"`
}

// LoginCompleteRequest is POST /v1/servers/{name}/login/complete: the URL
// the browser was redirected to, pasted by a person on a machine where the
// browser cannot reach the daemon's loopback listener.
type LoginCompleteRequest struct {
	RedirectURL string `json:"redirectUrl"`
}

// Approval is what a server waits for while it needs approval.
type Approval struct {
	// Reason is for people: "its command changed since it was approved".
	Reason string `json:"reason"`
	// Key identifies the definition waiting for approval; an approve
	// request that names it approves exactly that definition.
	Key string `json:"key"`
	// Current is the definition waiting; Approved the one approved before,
	// absent for a server never approved.
	Current    ServerDefinition  `json:"current"`
	Approved   *ServerDefinition `json:"approved,omitempty"`
	ApprovedAt *time.Time        `json:"approvedAt,omitempty"`
}

// ServerDefinition is what trust in a server is bound to, as shown to
// people: names and references only, the URL with query values redacted.
type ServerDefinition struct {
	Type    string   `json:"type"`
	Command []string `json:"command,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	// Env maps each variable the server gets to the variable it is read
	// from.
	Env         map[string]string `json:"env,omitempty"`
	URL         string            `json:"url,omitempty"`
	HeaderNames []string          `json:"headerNames,omitempty"`
}

// HeldTool is a tool held back because its definition changed since a
// person accepted it.
type HeldTool struct {
	// Name is the Plexus name it is offered under once accepted.
	Name string `json:"name"`
	// Tool is the upstream's own name.
	Tool string `json:"tool"`
	// Reason is for people: "its description changed since it was
	// accepted".
	Reason string `json:"reason"`
	// Changed names the fields that differ: title, description,
	// inputSchema, outputSchema, annotations.
	Changed []string `json:"changed,omitempty"`
	// OldHash and Old are the accepted definition (absent for a new tool
	// whose definition could not be recorded); NewHash and New the one
	// the server offers now. An accept request may send NewHash back, so
	// that a definition that changed again meanwhile is not accepted.
	OldHash  string          `json:"oldHash,omitempty"`
	NewHash  string          `json:"newHash"`
	Old      *ToolDefinition `json:"old,omitempty"`
	New      ToolDefinition  `json:"new"`
	PinnedAt *time.Time      `json:"pinnedAt,omitempty"`
}

// ToolDefinition is a tool's definition as it reaches models: cleaned,
// bounded, its JSON canonical.
type ToolDefinition struct {
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// AcceptRequest is POST /v1/servers/{name}/accept: re-pin held tools to
// their current definitions, the named Tools or All of them.
type AcceptRequest struct {
	Tools []string `json:"tools,omitempty"`
	All   bool     `json:"all,omitempty"`
	// Hashes maps a tool to the NewHash a person was shown; a tool whose
	// definition changed again since is refused (409) and nothing is
	// accepted.
	Hashes map[string]string `json:"hashes,omitempty"`
}

// AcceptResult answers an accept: the tools accepted (none if nothing was
// held back) and the server's status after it.
type AcceptResult struct {
	Accepted []string      `json:"accepted"`
	Server   *ServerStatus `json:"server,omitempty"`
}

// ApproveRequest is POST /v1/servers/{name}/approve: trust the server's
// current definition and start it.
type ApproveRequest struct {
	// Key, if set, must be the Approval.Key a person was shown; a
	// definition that changed again since is refused (409).
	Key string `json:"key,omitempty"`
}

// ServerConfig is GET /v1/servers/{name}: the server's stored configuration,
// exactly as in extensions.json (references, never resolved values).
type ServerConfig struct {
	Revision int64           `json:"revision"`
	Name     string          `json:"name"`
	Config   json.RawMessage `json:"config"`
	Status   ServerStatus    `json:"status"`
}

// PutServerRequest is POST /v1/servers (add) and PUT /v1/servers/{name}
// (replace). Config is the server's JSON as it appears in extensions.json,
// decoded strictly by the daemon.
type PutServerRequest struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
	// NoVerify saves without starting the server first.
	NoVerify bool `json:"noVerify,omitempty"`
	// Pending marks a server added by an agent (through the MCP face): it is
	// saved but not started until a person approves it with
	// `plexus approve NAME` (R-FACE-6).
	Pending bool `json:"pending,omitempty"`
	// Secrets are values typed into the server's form, by the variable the
	// config references: "" keeps the stored value, "-" removes it, any
	// other value replaces it. They are saved with the server, owned by it,
	// and deleted with it; they are never sent back.
	Secrets map[string]string `json:"secrets,omitempty"`
}

// Revision is one kept version of extensions.json: every save keeps the
// version it replaces, so that an overwrite can be undone.
type Revision struct {
	Name  string    `json:"name"`
	Saved time.Time `json:"saved"`
	Size  int64     `json:"size"`
}

// Revisions answers GET /v1/revisions, newest first.
type Revisions struct {
	Revisions []Revision `json:"revisions"`
}

// WriteResult answers a successful write.
type WriteResult struct {
	Revision int64         `json:"revision"`
	Server   *ServerStatus `json:"server,omitempty"`
	// EventSeq is the Seq of the newest event the answer is as new as (see
	// ServerStatus.EventSeq): for a removal, an event about the server
	// numbered no higher is older than the removal.
	EventSeq int64 `json:"eventSeq"`
}

// Tool is one catalog entry.
type Tool struct {
	// Name is the Plexus name, mcp_<server>_<tool>_<hash>.
	Name   string `json:"name"`
	Server string `json:"server"`
	// Tool is the upstream's own name.
	Tool         string          `json:"tool"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Kind is "tool", or "read_resource" / "get_prompt" for the per-server
	// operations.
	Kind string `json:"kind"`
}

// Tool kinds.
const (
	KindTool         = "tool"
	KindReadResource = "read_resource"
	KindGetPrompt    = "get_prompt"
)

// ToolList is GET /v1/tools.
type ToolList struct {
	Tools []Tool `json:"tools"`
	// Warnings names servers left out and why.
	Warnings []string `json:"warnings,omitempty"`
	// EventSeq is the Seq of an event the list is at least as new as (see
	// ServerStatus.EventSeq): of two lists, the one with the higher number
	// was read later, whichever arrived last. Every change of the catalog
	// is announced by an EventCatalog, so a list read after that event's
	// Seq has the change. 0 in a session's list (GET
	// /v1/sessions/{id}/tools), which holds changes back during a turn.
	EventSeq int64 `json:"eventSeq"`
}

// CallRequest is POST /v1/call.
type CallRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// CallResult is the answer to POST /v1/call: the upstream CallToolResult,
// unchanged but for Plexus's _meta markers.
type CallResult struct {
	Result json.RawMessage `json:"result"`
}

// Meta keys Plexus sets in a CallToolResult's _meta.
const (
	// MetaOutcome is "unknown" when the transport was lost mid-call: the
	// call may or may not have taken effect.
	MetaOutcome = "plexus/outcome"
	// MetaError classifies a Plexus-made error result: "timeout",
	// "unavailable", "transport_lost", or "held" for a tool held back
	// until a person accepts its change or approves its server.
	MetaError = "plexus/error"
)

// Resource is one resource of a server.
type Resource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Template is set for resource templates (uriTemplate).
	Template bool `json:"template,omitempty"`
}

// ResourceList is GET /v1/resources.
type ResourceList struct {
	Resources []Resource `json:"resources"`
}

// ReadResourceRequest is POST /v1/resources/read.
type ReadResourceRequest struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// ReadResourceResult carries the upstream ReadResourceResult unchanged.
type ReadResourceResult struct {
	Result json.RawMessage `json:"result"`
}

// Prompt is one prompt of a server.
type Prompt struct {
	Server      string           `json:"server"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptList is GET /v1/prompts.
type PromptList struct {
	Prompts []Prompt `json:"prompts"`
}

// GetPromptRequest is POST /v1/prompts/get.
type GetPromptRequest struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// GetPromptResult carries the upstream GetPromptResult unchanged.
type GetPromptResult struct {
	Result json.RawMessage `json:"result"`
}

// SecretList is GET /v1/secrets: names only, never values.
type SecretList struct {
	Revision int64    `json:"revision"`
	Names    []string `json:"names"`
}

// SetSecretRequest is PUT /v1/secrets/{name}.
type SetSecretRequest struct {
	Value string `json:"value"`
}

// Event is one message of GET /v1/events, a server-sent event stream: the
// SSE event name is Type and the data is this struct as JSON.
type Event struct {
	// Seq increases by one for every event the daemon emits.
	Seq  int64     `json:"seq"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Server names the server the event is about, if any.
	Server string `json:"server,omitempty"`
	// Status is the server's new status, for EventServer.
	Status *ServerStatus `json:"status,omitempty"`
	// Line is one stderr line (secrets redacted), for EventStderr.
	Line string `json:"line,omitempty"`
	// Held lists the server's tools held back, for EventHeld.
	Held []HeldTool `json:"held,omitempty"`
	// Approval says why the server needs approval, for EventHeld.
	Approval *Approval `json:"approval,omitempty"`
	// LineSeq is the line's sequence number in the server's stderr ring,
	// for EventStderr: comparable with LogLines.NextSeq, so that a follower
	// that read the logs skips the lines it already has.
	LineSeq int64 `json:"lineSeq,omitempty"`
	// SettingsFile is the hand edit of extensions.json, for
	// EventSettingsFile; absent when there is none any more (applied or
	// discarded).
	SettingsFile *SettingsFile `json:"settingsFile,omitempty"`
}

// Event types.
const (
	// EventServer: a server's state changed, or it was added or changed.
	EventServer = "server"
	// EventSettingsFile: extensions.json was changed by hand (or the
	// change was fixed, applied or discarded): Event.SettingsFile is the
	// edit as it is now.
	EventSettingsFile = "settings_file"
	// EventServerRemoved: a server was removed from the settings.
	EventServerRemoved = "server_removed"
	// EventCatalog: the catalog changed ("capabilities changed"): tools,
	// resources or prompts were added, removed or altered.
	EventCatalog = "catalog"
	// EventStderr: a server wrote a line to stderr.
	EventStderr = "stderr"
	// EventHeld: tools of a server were held back because their
	// definition changed, or the server needs approval because its own
	// definition did (R-CAT-6); Held and Approval say what.
	EventHeld = "held"
	// EventCallApproval: a tool call began or stopped waiting for the
	// user's approval (GET /v1/approvals lists those waiting).
	EventCallApproval = "call_approval"
)

// CallApproval is a tool call waiting for the user's approval (mcp.policy
// asks for it, and the client that made it cannot be asked): GET
// /v1/approvals lists them, POST /v1/approvals/{id} decides one.
type CallApproval struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Name is the tool's Plexus name.
	Name    string `json:"name"`
	Client  string `json:"client,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Arguments summarise the call's arguments: bounded, secrets redacted.
	Arguments string `json:"arguments"`
	// Rule is the rule that asks ("mcp.policy.rules[2]").
	Rule  string    `json:"rule"`
	Since time.Time `json:"since"`
	// Until is when the call stops waiting and is refused.
	Until time.Time `json:"until"`
}

// DecideCallRequest is POST /v1/approvals/{id}.
type DecideCallRequest struct {
	Approve bool `json:"approve"`
}

// LogLines is GET /v1/servers/{name}/logs: the server's last stderr lines
// (at most 200, kept across restarts, secrets redacted).
type LogLines struct {
	Server string `json:"server"`
	// Lines are oldest first; Seq of the last line is NextSeq-1.
	Lines   []string `json:"lines"`
	NextSeq int64    `json:"nextSeq"`
}

// Session describes a session of the session API: one client's view of
// the catalog, with its own composition and turns.
type Session struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Off lists the servers switched off for this session only.
	Off []string `json:"off,omitempty"`
	// Instances lists the per-session servers running for this session.
	Instances []string `json:"instances,omitempty"`
	InTurn    bool     `json:"inTurn"`
	// AllowExternalCall and AllowWrite are the MCP face's gates
	// (mcp.face in extensions.json), for a face serving this session.
	AllowExternalCall bool `json:"allowExternalCall,omitempty"`
	AllowWrite        bool `json:"allowWrite,omitempty"`
}

// NewSessionRequest is POST /v1/sessions.
type NewSessionRequest struct {
	// Off switches servers off for this session only.
	Off []string `json:"off,omitempty"`
}

// TurnRequest is POST /v1/sessions/{id}/turn: "submit" when a user turn
// starts, "end" when it ended.
type TurnRequest struct {
	Event string `json:"event"`
}

// ImportRequest is POST /v1/import: another client's settings file, read
// by the CLI with the user's rights and sent as it is; the daemon parses it
// and adds its servers, moving literal secrets to the managed store.
type ImportRequest struct {
	// Dialect names the client whose format Content is in (claude,
	// claude-desktop, cursor, vscode, codex, zed, goose, moltis); empty
	// asks the daemon to tell from Source and Content.
	Dialect string `json:"dialect,omitempty"`
	// Source is the file's path, for telling the dialect and for messages;
	// when absolute, a relative cwd of a server resolves against its folder.
	Source  string `json:"source,omitempty"`
	Content string `json:"content"`
	// DryRun reports what would happen and changes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Sandbox gives every imported stdio server the strict sandbox (no
	// network, writes only to its private folder).
	Sandbox bool `json:"sandbox,omitempty"`
}

// Import entry actions.
const (
	ImportImported = "imported"
	ImportRenamed  = "renamed" // imported under another name
	ImportSkipped  = "skipped"
)

// Import entry results: what the import did with a server it read.
const (
	ImportAdded     = "added"
	ImportUnchanged = "unchanged" // the same server is there already
	ImportConflict  = "conflict"  // a different server has the name: kept, not overwritten
)

// ImportEntry reports on one server entry of the file. It names secrets,
// never their values.
type ImportEntry struct {
	// Source is the entry's key path in the file, e.g. mcpServers.github.
	Source string `json:"source"`
	// Original is the entry's name in the file.
	Original string `json:"original"`
	// Name is the Plexus name; empty when skipped.
	Name string `json:"name,omitempty"`
	// Action is ImportImported, ImportRenamed or ImportSkipped.
	Action string `json:"action"`
	// Reason says why the entry was renamed or skipped.
	Reason string `json:"reason,omitempty"`
	// Result is ImportAdded, ImportUnchanged or ImportConflict, for
	// entries not skipped.
	Result string `json:"result,omitempty"`
	// Notes say what changed on the way in: fields skipped, values moved
	// to managed secrets, placeholders rewritten.
	Notes []string `json:"notes,omitempty"`
	// Secrets names the managed secrets that hold values moved out of
	// this entry.
	Secrets []string `json:"secrets,omitempty"`
	// Missing names variables the server refers to that are not set.
	Missing []string `json:"missing,omitempty"`
}

// ImportResult answers POST /v1/import.
type ImportResult struct {
	Dialect string `json:"dialect"`
	DryRun  bool   `json:"dryRun"`
	// Revision is the settings' revision after the import.
	Revision int64         `json:"revision"`
	Entries  []ImportEntry `json:"entries"`
	// Notes are about the file as a whole.
	Notes     []string `json:"notes,omitempty"`
	Added     []string `json:"added"`
	Unchanged []string `json:"unchanged"`
	Conflicts []string `json:"conflicts"`
	// SecretsSet names the managed secrets set; SecretsKept those that
	// held the same value already.
	SecretsSet  []string `json:"secretsSet"`
	SecretsKept []string `json:"secretsKept"`
	// Missing names the variables the imported servers refer to that are
	// set neither in the managed store nor in the daemon's environment.
	Missing []string `json:"missing"`
}

// ExportResult is GET /v1/export?client=NAME: the snippet that registers
// `plexus mcp` in another client.
type ExportResult struct {
	Client string `json:"client"`
	// Path is the file the snippet goes in (~ is the home directory).
	Path string `json:"path"`
	// Format is json, toml or yaml.
	Format string `json:"format"`
	Text   string `json:"text"`
	// Command registers Plexus through the client's own command line
	// instead, where it has one.
	Command string   `json:"command,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// ExternalCallOff is what every front end and the face say while
// mcp.face.allowExternalCall is off, and how to switch it on.
const ExternalCallOff = "external calls are off: clients of Plexus see only plexus_status and plexus_snapshot, " +
	"not your servers' tools; switch them on with `plexus settings set face.allowExternalCall true`"
