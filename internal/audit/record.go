// Package audit is the audit log: one record for every tool call,
// resource read, prompt get, login, approval or policy decision and
// settings change — when, who (team member, client name and version,
// profile, session), what (server, tool, Plexus name), outcome, duration
// and sizes. A call's arguments and result are never recorded unless the
// server's settings ask for it (auditArguments), and then with secrets
// redacted (redact.go).
//
// Records are JSON lines in $PLEXUS_HOME/audit.jsonl (0600), rotated by
// size and bounded in count (file.go). Recording is off the call's path:
// Record hands the record to a bounded queue that one writer drains
// (log.go); a full queue, a slow or full disk drops records and counts
// them, never blocks or fails a call. Read (read.go) filters and follows
// the files for `plexus audit`. Sinks beside the file (the team's
// database, OTLP logs) take the same records in batches; in team mode each
// replica's records form a chain signed with a key derived from the
// team's secret (chain.go), so that a database writer who lacks the key
// can neither forge nor erase a record unnoticed.
package audit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// Kinds of record.
const (
	KindToolCall     = "tools/call"
	KindResourceRead = "resources/read"
	KindPromptGet    = "prompts/get"
	KindLogin        = "login"
	KindApproval     = "approval"
	KindPolicy       = "policy"
	KindSettings     = "settings"
)

// Record is one line of the audit log.
type Record struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"`
	// Replica is the team replica that wrote it ("" on one machine).
	Replica string `json:"replica,omitempty"`

	// Who.
	Member        string `json:"member,omitempty"` // the team member (caller's user)
	Client        string `json:"client,omitempty"` // clientInfo.name
	ClientVersion string `json:"clientVersion,omitempty"`
	Profile       string `json:"profile,omitempty"`
	Session       string `json:"session,omitempty"`

	// What.
	Server string `json:"server,omitempty"`
	// Tool is the server's own name of the tool, the resource URI or the
	// prompt name; for a settings change, what changed (its API path).
	Tool string `json:"tool,omitempty"`
	Name string `json:"name,omitempty"` // the Plexus name
	// Outcome: "ok", "tool_error", a plexus/error marker, a decision
	// ("approved", "denied", …) or "error".
	Outcome string `json:"outcome"`
	// Reason says why (a decision's channel or rule, a login's grant).
	Reason string `json:"reason,omitempty"`
	// Ms is how long it took.
	Ms float64 `json:"ms,omitempty"`
	// Sizes of the arguments and the result as JSON, in bytes.
	ArgBytes    int `json:"argBytes,omitempty"`
	ResultBytes int `json:"resultBytes,omitempty"`
	// Arguments and Result, only for a server whose settings ask for it,
	// redacted.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`

	// The team chain (chain.go): the replica's sequence number, and the
	// MAC over this record and the one before it.
	Seq uint64 `json:"seq,omitempty"`
	MAC string `json:"mac,omitempty"`
}

// Millis is d in milliseconds, to the microsecond: a Record's Ms.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Client names the MCP client of a request: what it said in its
// initialize (or, MCP 2026-07-28, in its request's _meta), and the
// profile and face session it came through.
type Client struct {
	Name, Version, Profile, Session string
}

type clientKey struct{}

// WithClient returns ctx carrying c, for the records of what ctx does.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the client ctx carries, if any.
func ClientFrom(ctx context.Context) (Client, bool) {
	c, ok := ctx.Value(clientKey{}).(Client)
	return c, ok
}

// who fills r's who from ctx: the member from the caller, the client
// from WithClient; what r already says is kept.
func who(ctx context.Context, r *Record) {
	if ctx == nil {
		return
	}
	if id, ok := caller.From(ctx); ok && r.Member == "" {
		r.Member = id.User
	}
	if c, ok := ClientFrom(ctx); ok {
		if r.Client == "" {
			r.Client, r.ClientVersion = c.Name, c.Version
		}
		if r.Profile == "" {
			r.Profile = c.Profile
		}
		if r.Session == "" {
			r.Session = c.Session
		}
	}
}
