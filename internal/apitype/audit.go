package apitype

import (
	"encoding/json"
	"time"
)

// AuditRecord is one record of the audit log, as GET /v1/audit and its
// follow stream send it (the daemon's audit.Record, field for field).
type AuditRecord struct {
	Time          time.Time       `json:"time"`
	Kind          string          `json:"kind"`
	Replica       string          `json:"replica,omitempty"`
	Member        string          `json:"member,omitempty"`
	Client        string          `json:"client,omitempty"`
	ClientVersion string          `json:"clientVersion,omitempty"`
	Profile       string          `json:"profile,omitempty"`
	Session       string          `json:"session,omitempty"`
	Server        string          `json:"server,omitempty"`
	Tool          string          `json:"tool,omitempty"`
	Name          string          `json:"name,omitempty"`
	Outcome       string          `json:"outcome"`
	Reason        string          `json:"reason,omitempty"`
	Ms            float64         `json:"ms,omitempty"`
	ArgBytes      int             `json:"argBytes,omitempty"`
	ResultBytes   int             `json:"resultBytes,omitempty"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Seq           uint64          `json:"seq,omitempty"`
	MAC           string          `json:"mac,omitempty"`
}

// AuditRecords is GET /v1/audit: the newest records that pass the query's
// filter (kind, server, tool, member, outcome, since, limit), oldest
// first: this daemon's, or with team=1 every replica's of a team. Dropped counts the records lost since the daemon started (its
// queue was full, or the disk failed).
type AuditRecords struct {
	Records []AuditRecord `json:"records"`
	Dropped uint64        `json:"dropped"`
	// Off is true when the audit log is switched off (mcp.audit.enabled).
	Off bool `json:"off,omitempty"`
	// Problems, for ?team=1 (every replica's records, from the database
	// store), lists the records whose chain does not verify: forged,
	// altered, or erased by someone without the team's key.
	Problems []string `json:"problems,omitempty"`
}

// EventAudit is the SSE event type of GET /v1/audit/follow.
const EventAudit = "audit"
