package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/policy"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// A client that elicits only in URL mode (MCP 2025-11-25's
// capabilities.elicitation.url, without form) cannot be asked the
// question itself, but it can send the user to the web page, where the
// call waits for approval like any other: the gate puts an
// elicitation/create in URL mode to it, naming the page with the call's
// id, and when the user decides there (or in the TUI, or with `plexus
// approve --call`) tells a client with a session so with
// notifications/elicitation/complete. The URL carries no credential: the
// page asks for its own login (`plexus ui`) before it shows or decides
// anything, as the spec requires of a URL-mode elicitation ("MUST NOT
// provide a URL which is pre-authenticated"). A stateless (2026-07-28)
// client gets the question in its input_required result and its retry
// waits for the decision; its era has no completion notification.

// approvalPage is the web page's address, http://host:port, or "" when
// the daemon serves none (SetApprovalPage).
type approvalPage = atomic.Pointer[string]

// SetApprovalPage sets the address of the web page (http://host:port) a
// client that elicits only in URL mode is sent to, to decide on its call;
// "" for none (such a client then waits like one that cannot elicit).
func (h *Host) SetApprovalPage(base string) { h.page.Store(&base) }

// approvalURL is the page's address for the waiting call id; "" for none.
func (h *Host) approvalURL(id string) string {
	base := h.page.Load()
	if base == nil || *base == "" {
		return ""
	}
	return *base + "/?" + url.Values{"call": {id}}.Encode()
}

// urlOnly reports whether caps elicit in URL mode and not in form mode
// (an empty elicitation capability means form, by the spec).
func urlOnly(caps *mcp.ClientCapabilities) bool {
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil && caps.Elicitation.Form == nil
}

// pointByURL is the pointer (approvals.go) of a call whose client elicits
// in URL mode; nil when there is no page to send the user to.
func (h *Host) pointByURL(ctx context.Context, ix indexed, d policy.Decision, args json.RawMessage) pointer {
	if !urlOnly(upstream.CallerCapabilities(ctx)) || h.approvalURL("x") == "" {
		return nil
	}
	session := upstream.CallerHasSession(ctx)
	return func(pctx context.Context, id string) (<-chan string, func()) {
		q := map[string]any{
			"mode": "url",
			"url":  h.approvalURL(id),
			"message": fmt.Sprintf("Plexus asks you to approve or deny a call of the tool %q of the server %q (%s) on its web page, where it waits as %s (log in there with `plexus ui`).\nArguments: %s",
				ix.entry.Tool, ix.entry.Server, ix.entry.Name, id, policy.Summary(args, maxSummary)),
		}
		if session {
			// The completion notification names it (2025-11-25); the
			// stateless era has neither.
			q["elicitationId"] = id
		}
		raw, _ := json.Marshal(q)
		declined := make(chan string, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			ans, err := upstream.AskCaller(pctx, "elicitation/create", raw)
			if err != nil {
				// The call still waits on the page, the TUI and plexus approve.
				h.log.Info("url elicitation failed", "server", ix.entry.Server, "tool", ix.entry.Tool, "error", err)
				return
			}
			var res mcp.ElicitResult
			if json.Unmarshal(ans, &res) != nil || res.Action != "accept" {
				action := res.Action
				if action == "" {
					action = "no answer it could read"
				}
				declined <- action
			}
		})
		return declined, wg.Wait
	}
}

// completed tells a client with a session that the URL-mode elicitation
// id is over: the user decided on the call.
func completed(ctx context.Context, id string) {
	upstream.TellCaller(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": id})
}
