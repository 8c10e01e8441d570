package tui

import (
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// TestWaitingLine: a call waiting for approval shows on the list's status
// line, with the keys that decide it.
func TestWaitingLine(t *testing.T) {
	m := fixtureModel(t)
	m.daemonMsg(approvalsMsg{list: []apitype.CallApproval{{ID: "call-x", Name: "example_echo", Arguments: `text="hi"`}}})
	if f := m.frame(); !strings.Contains(f, "1 call(s) to approve · A yes · D no · example_echo by the API: text=\"hi\"") {
		t.Errorf("the list:\n%s", f)
	}
}
