package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Tool calls waiting for the user's approval (mcp.policy asks, and the
// client cannot): the list's status line shows the oldest, A approves it
// and D refuses it, as the web page and `plexus approve --call` do.

// approvalsMsg is the calls waiting, as read.
type approvalsMsg struct {
	list    []apitype.CallApproval
	err     error
	decided string // what a decision did, "" for a read
}

func (m *Model) fetchApprovals() tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		list, err := c.CallApprovals(ctx)
		return approvalsMsg{list: list, err: err}
	}
}

// decideOldest approves or refuses the oldest waiting call.
func (m *Model) decideOldest(approve bool) tea.Cmd {
	if len(m.waiting) == 0 {
		return nil
	}
	w := m.waiting[0]
	c, ctx := m.c, m.ctx
	verb := "refused"
	if approve {
		verb = "approved"
	}
	m.msg, m.errMsg = "", ""
	return func() tea.Msg {
		if err := c.DecideCall(ctx, w.ID, approve); err != nil {
			return approvalsMsg{err: fmt.Errorf("deciding on %s: %w", w.Name, err)}
		}
		list, err := c.CallApprovals(ctx)
		return approvalsMsg{list: list, err: err, decided: verb + " the call of " + w.Name}
	}
}

// waitingLine is the status line of the calls waiting; "" for none.
func (m *Model) waitingLine() string {
	if len(m.waiting) == 0 {
		return ""
	}
	w := m.waiting[0]
	client := w.Client
	if client == "" {
		client = "the API"
	}
	return styleAsk.Render(fmt.Sprintf("%d call(s) to approve · A yes · D no · %s by %s: %s",
		len(m.waiting), w.Name, client, w.Arguments))
}
