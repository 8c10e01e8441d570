package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// The call spine. Every tool call, whoever makes it and however its frame
// is carried, goes one way:
//
//	resolve → gate → deadline → invoke → cap → classify → observe (metrics, audit)
//
// Resolving is the caller's (a catalog entry of one snapshot: Call,
// Session.Call, Session.CallRaw). Two invokers carry the call: decoded (the
// SDK's client encodes the arguments and decodes the result) and frame
// forwarding (the client's params go upstream with only the name and _meta
// replaced, and the result comes back as the server wrote it). Everything
// else — the policy's gate (gate.go), the bound on its time, the cap on
// its result, the naming of its failure, the metrics — is the same code
// for both.

// Paths: how a call was carried, the "path" label of the call metrics.
const (
	PathDecoded = "decoded"
	PathFrame   = "frame"
)

// callResult is what a call gave: decoded, or as bytes (frame forwarding).
type callResult struct {
	res *mcp.CallToolResult
	raw json.RawMessage
}

// invoker makes the call on a live connection, bounded by ctx and by the
// time limit within; a call past within fails with an error that is
// upstream.ErrTimedOut.
type invoker func(ctx context.Context, conn *upstream.Conn, within time.Duration) (callResult, error)

// run is the pipeline for one resolved catalog entry; args are the call's
// arguments as the client wrote them (for the gate's question to the
// user, and the audit log).
func (h *Host) run(ctx context.Context, snap *snapshot, ix indexed, path string, args json.RawMessage, invoke invoker) (callResult, error) {
	start := time.Now()
	var out callResult
	var err error
	if res := h.gate(ctx, snap, ix, args); res != nil {
		out.res = res // refused: never sent
	} else {
		out, err = h.invoke(ctx, snap, ix, invoke)
	}
	if h.opts.Observer == nil && !h.opts.Audit.On() {
		return out, err
	}
	d, outcome := time.Since(start), out.outcome(err)
	if h.opts.Observer != nil {
		h.opts.Observer.ObserveCall(ix.entry.Server, path, outcome, d)
	}
	if id, ok := caller.From(ctx); ok {
		h.observeUser(id, ix, outcome, d)
	}
	if h.opts.Audit.On() {
		h.auditCall(ctx, ix, args, out, outcome, d)
	}
	return out, err
}

// observeUser logs a team member's call, by the user its token named
// (never the token), and counts it by user where the metrics do.
func (h *Host) observeUser(id caller.Identity, ix indexed, outcome string, d time.Duration) {
	h.log.Info("call", "user", id.User, "server", ix.entry.Server, "tool", ix.entry.Tool,
		"outcome", outcome, "ms", d.Milliseconds())
	if o, ok := h.opts.Observer.(UserCallObserver); ok {
		o.ObserveUserCall(id.User, ix.entry.Server, outcome)
	}
}

func (h *Host) invoke(ctx context.Context, snap *snapshot, ix indexed, invoke invoker) (callResult, error) {
	conn, done, err := h.use(ctx, ix.server)
	if err != nil && ctx.Err() != nil {
		return callResult{}, ctx.Err() // the caller went away while the server started
	}
	if err != nil {
		return callResult{res: errorResult(err.Error(), "unavailable", "")}, nil
	}
	defer done()
	if res := stillOffered(h.snap.Load(), snap, ix); res != nil {
		return callResult{res: res}, nil
	}
	timeout := callTimeout(ix.server.Config(), snap.cfg)
	out, err := invoke(ctx, conn, timeout)
	if err != nil {
		return h.failed(ctx, ix, err, timeout)
	}
	return h.capResult(ctx, ix, snap, out), nil
}

// failed is the result of a call to ix that failed with err.
func (h *Host) failed(ctx context.Context, ix indexed, err error, timeout time.Duration) (callResult, error) {
	if ule := (*oauth.UserLoginError)(nil); errors.As(err, &ule) && h.oauth != nil {
		return callResult{res: h.userLoginResult(ctx, ule)}, nil
	}
	if nle := (*oauth.NeedsLoginError)(nil); errors.As(err, &nle) {
		// Refused, or not sent, for want of a login: the server did not act.
		return callResult{res: errorResult(nle.Error(), "needs_login", "")}, nil
	}
	if le := h.refusedLogin(ix.server, err); le != nil {
		return callResult{res: errorResult(le.Error(), "needs_login", "")}, nil
	}
	res, err := callFailure(ctx, err, ix.server, timeout)
	return callResult{res: res}, err
}

// stillOffered checks a call resolved in snapshot was against the catalog
// now, if it changed meanwhile — a server started on demand for the call
// lists its tools afresh, and a tool that changed while it was stopped is
// held by pinning, not called: nil if the call may go on, else its error
// result.
func stillOffered(now, was *snapshot, ix indexed) *mcp.CallToolResult {
	if now == was || ix.entry.Kind != catalog.KindTool {
		return nil
	}
	if _, ok := now.lookup(ix.entry.Name); ok {
		return nil
	}
	if msg, held := now.heldCall(ix.entry.Name); held {
		return errorResult(msg, "held", "")
	}
	return errorResult(fmt.Sprintf("%s no longer offers the tool %s: its catalog changed when it started", ix.entry.Server, ix.entry.Tool), "unavailable", "")
}

// outcome names a call's outcome for the metrics: "ok", "tool_error", or
// the plexus/error marker of a failed call.
func (r callResult) outcome(err error) string {
	if r.res != nil || err != nil {
		return outcomeOf(r.res, err)
	}
	// A scan, not a decode: a text that quotes this literal would count as
	// an error, in the metrics only.
	if bytes.Contains(r.raw, []byte(`"isError":true`)) {
		return "tool_error"
	}
	return "ok"
}

// decoded is the result as a Go value, for callers that want one.
func (r callResult) decoded() (*mcp.CallToolResult, error) {
	if r.res != nil || r.raw == nil {
		return r.res, nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// bytes is the result as JSON, for callers that forward frames.
func (r callResult) bytes() (json.RawMessage, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	return json.Marshal(r.res)
}
