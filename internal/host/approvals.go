package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/policy"
)

// A call that needs the user's approval, from a client that cannot be
// asked (it does not elicit, or it is the settings API), waits for the
// user on the web page or `plexus approve --call ID` — bounded by
// Options.ApprovalWait and by the caller's own patience — and is refused
// with what to do if nobody decides in time.

// DefaultApprovalWait is Options.ApprovalWait's default: less than the
// minute most clients wait for a call.
const DefaultApprovalWait = 50 * time.Second

// maxWaiting bounds the calls waiting at once: past it, a call that needs
// approval is refused at once rather than queued.
const maxWaiting = 64

// waitingCalls are the calls waiting for the user's approval.
type waitingCalls struct {
	mu    sync.Mutex // guards byID
	byID  map[string]*waitingCall
	order []string
}

type waitingCall struct {
	view    apitype.CallApproval
	decided chan bool // buffered: the first decision stands
}

// Approvals are the calls waiting for the user's approval, oldest first.
func (h *Host) Approvals() []apitype.CallApproval {
	w := &h.waiting
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]apitype.CallApproval, 0, len(w.order))
	for _, id := range w.order {
		out = append(out, w.byID[id].view)
	}
	return out
}

// DecideCall approves or refuses a waiting call; a NotFoundError when no
// call waits under id (decided already, or it gave up).
func (h *Host) DecideCall(id string, approve bool) error {
	w := &h.waiting
	w.mu.Lock()
	c := w.byID[id]
	w.mu.Unlock()
	if c == nil {
		return &NotFoundError{What: "call waiting for approval", Name: id}
	}
	select {
	case c.decided <- approve:
	default:
	}
	return nil
}

// waited is how a call's wait for the user ended.
type waited struct {
	id       string // names the call in the refusal; "" if it could not wait
	approved bool   // what the user decided, if decided
	decided  bool   // false: nobody decided in time, or the caller went away
	// declined is the client's answer when the user declined at the
	// client to go and decide ("decline", "cancel"); "" otherwise.
	declined string
}

// A pointer sends the user to where they decide on the waiting call id
// (a URL-mode elicitation, urlask.go), in a goroutine that ends with ctx:
// a value on declined is the client's answer that the user declined to
// go, and done waits for the goroutine.
type pointer func(ctx context.Context, id string) (declined <-chan string, done func())

// awaitApproval holds a call until the user decides on it elsewhere, or
// its wait ends. While it waits, point (if not nil) sends the user to
// decide; their declining to go ends the wait.
func (h *Host) awaitApproval(ctx context.Context, ix indexed, d policy.Decision, args json.RawMessage, point pointer) waited {
	wait := h.opts.ApprovalWait
	if wait <= 0 {
		wait = DefaultApprovalWait
	}
	who, _ := audit.ClientFrom(ctx)
	now := time.Now()
	c := &waitingCall{decided: make(chan bool, 1), view: apitype.CallApproval{
		ID: "call-" + strings.ToLower(rand.Text()[:12]), Server: ix.entry.Server, Tool: ix.entry.Tool, Name: ix.entry.Name,
		Client: who.Name, Profile: who.Profile, Arguments: policy.Summary(args, maxSummary), Rule: d.Rule, Since: now, Until: now.Add(wait)}}
	w := &h.waiting
	w.mu.Lock()
	if len(w.order) >= maxWaiting {
		w.mu.Unlock()
		return waited{}
	}
	if w.byID == nil {
		w.byID = map[string]*waitingCall{}
	}
	w.byID[c.view.ID] = c
	w.order = append(w.order, c.view.ID)
	w.mu.Unlock()
	h.events.emit(apitype.Event{Type: apitype.EventCallApproval, Server: ix.entry.Server})
	defer func() {
		w.mu.Lock()
		delete(w.byID, c.view.ID)
		w.order = slices.DeleteFunc(w.order, func(s string) bool { return s == c.view.ID })
		w.mu.Unlock()
		h.events.emit(apitype.Event{Type: apitype.EventCallApproval, Server: ix.entry.Server})
	}()
	var declined <-chan string
	if point != nil {
		pctx, stop := context.WithCancel(ctx)
		var done func()
		declined, done = point(pctx, c.view.ID)
		defer func() { stop(); done() }()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ok := <-c.decided:
		return waited{id: c.view.ID, approved: ok, decided: true}
	case answer := <-declined:
		return waited{id: c.view.ID, declined: answer}
	case <-timer.C:
	case <-ctx.Done():
	}
	return waited{id: c.view.ID}
}
