package oauth

import (
	"context"

	"github.com/plexus-mcp/plexus/internal/audit"
)

// auditLogin records a login's, grant's or logout's outcome in the audit
// log: account is the server (or a member's account at it), how the
// grant ("authorization_code", "client_credentials", …, "logout"). Never
// a token: an error's text only, which names no secret (token errors
// carry the server's code and description).
func (m *Manager) auditLogin(ctx context.Context, account, how string, err error) {
	if m.audit == nil {
		return
	}
	r := audit.Record{Kind: audit.KindLogin, Server: account, Outcome: "ok", Reason: how}
	if err != nil {
		r.Outcome = "error"
		r.Reason = how + ": " + err.Error()
	}
	m.audit.Record(ctx, r)
}
