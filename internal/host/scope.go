package host

import (
	"context"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/caller"
)

// "Once per session" for a client without a session. An MCP 2026-07-28
// client has no session: over HTTP nothing ties its next call to this
// one, so a rule that asks once per session asks it every call. Through
// `plexus mcp`, though, the bridge process is one editor's session: it
// names itself on each request with a random value of its own
// (apitype.HeaderClientScope), and an approval holds for that process —
// for that client name and team member — until it has made no call for
// scopeIdle. The value proves nothing a token holder could not do anyway:
// it is not a credential, only a name no other process knows.

// scopeIdle is how long a bridge's approvals last without a call: the
// host cannot see the process end.
const scopeIdle = 30 * time.Minute

// maxScopes bounds the bridges remembered; past it the least recently
// used is forgotten (its client is asked again).
const maxScopes = 256

type scopeKey struct{}

// WithApprovalScope notes on ctx the bridge a stateless request came
// through ("" for none): the scope of its once-per-session approvals.
func WithApprovalScope(ctx context.Context, scope string) context.Context {
	if scope == "" {
		return ctx
	}
	return context.WithValue(ctx, scopeKey{}, scope)
}

// scopes are the approvals of clients without a session, by bridge.
type scopes struct {
	mu sync.Mutex
	m  map[string]*scopeApprovals // guarded by mu
}

type scopeApprovals struct {
	tools map[string]bool // guarded by scopes.mu
	used  time.Time       // guarded by scopes.mu
}

// approvalKeeper keeps once-per-session approvals: a Session, or a
// bridge's scope. Its methods are safe on nil.
type approvalKeeper interface {
	approved(tool string) bool
	approve(tool string)
}

// keeperOf is where ctx's caller keeps its once-per-session approvals:
// sess if it has one, else its bridge's scope, else none.
func (h *Host) keeperOf(ctx context.Context, sess *Session) approvalKeeper {
	if sess != nil {
		return sess
	}
	id, _ := ctx.Value(scopeKey{}).(string)
	if id == "" {
		return (*Session)(nil)
	}
	who, _ := audit.ClientFrom(ctx)
	member, _ := caller.From(ctx)
	return &scopeRef{s: &h.scopes, key: member.User + "\x00" + who.Name + "\x00" + id}
}

// scopeRef is one bridge's approvals.
type scopeRef struct {
	s   *scopes
	key string
}

func (r *scopeRef) approved(tool string) bool {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	a := r.s.m[r.key]
	if a == nil || time.Since(a.used) > scopeIdle {
		return false
	}
	a.used = time.Now()
	return a.tools[tool]
}

func (r *scopeRef) approve(tool string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	a := r.s.m[r.key]
	if a == nil || time.Since(a.used) > scopeIdle {
		if r.s.m == nil {
			r.s.m = map[string]*scopeApprovals{}
		}
		if len(r.s.m) >= maxScopes {
			r.s.forgetOldestLocked()
		}
		a = &scopeApprovals{tools: map[string]bool{}}
		r.s.m[r.key] = a
	}
	a.used = time.Now()
	a.tools[tool] = true
}

func (s *scopes) forgetOldestLocked() {
	var oldest string
	var at time.Time
	for k, a := range s.m {
		if oldest == "" || a.used.Before(at) {
			oldest, at = k, a.used
		}
	}
	delete(s.m, oldest)
}
