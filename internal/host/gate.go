package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/policy"
	"github.com/plexus-mcp/plexus/internal/tracing"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// The gate is the pipeline's first step (pipeline.go): before a call is
// forwarded — before its server is even started on demand — mcp.policy's
// rules may refuse it, its client's rate limits may, and the user may be
// asked to approve it. A call the gate refuses is never sent: its result
// is an error result of Plexus's own, with its marker in _meta
// (apitype.MetaError): "denied", "rate_limited", "approval_required" or
// "declined".

// Markers of the gate's refusals.
const (
	markDenied      = "denied"
	markRateLimited = "rate_limited"
	markNeedsOK     = "approval_required"
	markDeclined    = "declined"
)

// MetaRetryAfterMs is the _meta key of a rate-limited call's result: how
// long to wait, in milliseconds, before calling again.
const MetaRetryAfterMs = "plexus/retryAfterMs"

// maxSummary bounds the account of a call's arguments in an approval
// question.
const maxSummary = 400

// gate decides whether a call may go on: nil if it may, else the result
// that refuses it. With no policy configured it is one nil check.
func (h *Host) gate(ctx context.Context, snap *snapshot, ix indexed, args json.RawMessage) *mcp.CallToolResult {
	p := snap.policy
	if p == nil {
		return nil
	}
	who, _ := audit.ClientFrom(ctx)
	c := policy.Call{Tool: ix.entry.Name, Client: who.Name, Profile: who.Profile,
		Annotations: ix.entry.Annotations, NotATool: ix.entry.Kind != catalog.KindTool}
	d := p.Decide(c)
	if d.Action == config.PolicyDeny {
		h.decided(ctx, audit.KindPolicy, ix, markDenied, d.Rule)
		return errorResult(fmt.Sprintf("plexus: the settings refuse this call of %s (%s denies it); it was not sent to %s", ix.entry.Name, d.Rule, ix.entry.Server), markDenied, "")
	}
	if r := h.limiter.Take(p, c, time.Now()); r != nil {
		h.decided(ctx, audit.KindPolicy, ix, markRateLimited, r.Limit)
		return rateLimited(ix, c.Client, r)
	}
	if d.Action == config.PolicyAllow {
		return nil
	}
	ctx, span := tracing.StartStep(ctx, "approve", tracing.Call{Tool: ix.entry.Name, Server: ix.entry.Server})
	res := h.approve(ctx, ix, d, args)
	if res != nil {
		mark, _ := res.Meta[apitype.MetaError].(string)
		span.EndAs(mark)
	} else {
		span.EndAs("")
	}
	return res
}

// rateLimited is the refusal of a call over a limit, with when to try
// again in its text and its _meta.
func rateLimited(ix indexed, client string, r *policy.Refusal) *mcp.CallToolResult {
	retry := ceil(r.RetryAfter, time.Millisecond)
	said := retry
	if said >= time.Second {
		said = ceil(retry, time.Second)
	}
	who := "this client"
	if client != "" {
		who = strconv.Quote(client)
	}
	res := errorResult(fmt.Sprintf("plexus: rate limit: %s may make %d calls per %s of the tools %s matches, so this call of %s was not sent; try again in %s (retry after %d ms)",
		who, r.Calls, r.Window, r.Limit, ix.entry.Name, said, retry.Milliseconds()), markRateLimited, "")
	res.Meta[MetaRetryAfterMs] = retry.Milliseconds()
	return res
}

// ceil rounds d up to a multiple of unit.
func ceil(d, unit time.Duration) time.Duration {
	if r := d.Round(unit); r < d {
		return r + unit
	} else {
		return r
	}
}

// approve asks the user, through the calling client, whether the call may
// go on: nil if they approve, else the refusal. An approval of a rule that
// asks once per session holds for the rest of the caller's session; a
// caller without a session of its own (MCP 2026-07-28) is asked every
// time, since nothing ties its next call to this one — unless it came
// through `plexus mcp`, whose process is its session (scope.go).
func (h *Host) approve(ctx context.Context, ix indexed, d policy.Decision, args json.RawMessage) *mcp.CallToolResult {
	var sess approvalKeeper = (*Session)(nil)
	if d.Action == config.PolicyAskOnce {
		var s *Session
		if upstream.CallerHasSession(ctx) {
			if id, _ := ctx.Value(sessionKey{}).(string); id != "" {
				s, _ = h.Session(id)
			}
		}
		sess = h.keeperOf(ctx, s)
		if sess.approved(ix.entry.Name) {
			h.decided(ctx, audit.KindApproval, ix, "approved", "once-per-session")
			return nil
		}
	}
	caps := upstream.CallerCapabilities(ctx)
	if caps == nil || caps.Elicitation == nil || (caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return h.approveElsewhere(ctx, sess, ix, d, args)
	}
	q, _ := json.Marshal(map[string]any{
		"message": fmt.Sprintf("Plexus asks: allow this call of the tool %q of the server %q (%s)?\nArguments: %s",
			ix.entry.Tool, ix.entry.Server, ix.entry.Name, policy.Summary(args, maxSummary)),
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
	})
	raw, err := upstream.AskCaller(ctx, "elicitation/create", q)
	if err != nil {
		h.decided(ctx, audit.KindApproval, ix, "refused", "elicitation failed")
		return errorResult(fmt.Sprintf("plexus: calling %s needs the user's approval (%s), and asking for it failed (%v); the call was not sent to %s", ix.entry.Name, d.Rule, err, ix.entry.Server), markNeedsOK, "")
	}
	var ans mcp.ElicitResult
	if json.Unmarshal(raw, &ans) != nil || ans.Action != "accept" {
		action := ans.Action
		if action == "" {
			action = "no answer it could read"
		}
		h.decided(ctx, audit.KindApproval, ix, markDeclined, "elicitation")
		return errorResult(fmt.Sprintf("plexus: the user did not approve this call of %s (the answer was %s); it was not sent to %s", ix.entry.Name, action, ix.entry.Server), markDeclined, "")
	}
	sess.approve(ix.entry.Name)
	h.decided(ctx, audit.KindApproval, ix, "approved", "elicitation")
	return nil
}

// approveElsewhere holds the call of a client that cannot be asked until
// the user decides on the web page, in the TUI or with `plexus approve
// --call` — a client that elicits in URL mode is sent to the page
// (urlask.go): nil if they approve, else the refusal, which says how to
// approve.
func (h *Host) approveElsewhere(ctx context.Context, sess approvalKeeper, ix indexed, d policy.Decision, args json.RawMessage) *mcp.CallToolResult {
	point := h.pointByURL(ctx, ix, d, args)
	w := h.awaitApproval(ctx, ix, d, args, point)
	if w.decided && point != nil {
		completed(ctx, w.id)
	}
	switch {
	case w.decided && w.approved:
		sess.approve(ix.entry.Name)
		h.decided(ctx, audit.KindApproval, ix, "approved", "settings API")
		return nil
	case w.decided:
		h.decided(ctx, audit.KindApproval, ix, markDeclined, "settings API")
		return errorResult(fmt.Sprintf("plexus: the user did not approve this call of %s (refused on the web page or with plexus approve); it was not sent to %s", ix.entry.Name, ix.entry.Server), markDeclined, "")
	case w.declined != "":
		h.decided(ctx, audit.KindApproval, ix, markDeclined, "url elicitation")
		return errorResult(fmt.Sprintf("plexus: the user did not open the approval page for this call of %s (the answer was %s); it was not sent to %s", ix.entry.Name, w.declined, ix.entry.Server), markDeclined, "")
	case w.id == "":
		h.decided(ctx, audit.KindApproval, ix, "refused", "too many waiting")
		return errorResult(fmt.Sprintf("plexus: calling %s needs the user's approval (%s), this client cannot be asked, and %d calls are already waiting for approval; the call was not sent to %s", ix.entry.Name, d.Rule, maxWaiting, ix.entry.Server), markNeedsOK, "")
	}
	h.decided(ctx, audit.KindApproval, ix, "refused", d.Rule)
	how := "this client cannot be asked: it does not support elicitation (form mode)"
	if point != nil {
		how = "this client was sent to the web page to approve it (URL-mode elicitation)"
	}
	return errorResult(fmt.Sprintf("plexus: calling %s needs the user's approval (%s: %s), and %s. It waited for approval as %s on the web page (plexus ui) and with `plexus approve --call %s`, and nobody approved it in time, so it was not sent to %s. Call it again and approve it there, call it from a client that supports elicitation, or change the rule in the settings (plexus settings, the web page or the TUI)",
		ix.entry.Name, d.Rule, d.Action, how, w.id, w.id, ix.entry.Server), markNeedsOK, "")
}

// decided records a decision of the gate in the audit log (who from ctx;
// never the arguments) and the daemon's log.
func (h *Host) decided(ctx context.Context, kind string, ix indexed, outcome, reason string) {
	h.log.Info("call decided", "kind", kind, "server", ix.entry.Server, "tool", ix.entry.Tool, "outcome", outcome, "reason", reason)
	h.opts.Audit.Record(auditSession(ctx), audit.Record{Kind: kind, Server: ix.entry.Server, Tool: ix.entry.Tool, Name: ix.entry.Name,
		Outcome: outcome, Reason: reason})
}

// approved reports whether the user approved tool for the rest of the
// session (false for no session).
func (s *Session) approved(tool string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.approvedTools[tool]
}

// approve keeps the user's approval of tool for the rest of the session
// (nothing without one).
func (s *Session) approve(tool string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.approvedTools == nil {
		s.approvedTools = map[string]bool{}
	}
	s.approvedTools[tool] = true
}
