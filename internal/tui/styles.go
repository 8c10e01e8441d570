package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/statewords"
)

// Colours support the words, never replace them: every state is also
// written out, so the screen reads the same without colour (R-UI-2).
var (
	styleTitle    = lipgloss.NewStyle().Bold(true)
	styleDim      = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleSelected = lipgloss.NewStyle().Bold(true)
	styleErr      = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleOK       = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleWarn     = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	styleAsk      = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	styleKey      = lipgloss.NewStyle().Bold(true)
)

// stateLabel is a server's state as a mark and the word every front end
// uses (statewords), with its colour.
func stateLabel(s apitype.ServerStatus) (string, lipgloss.Style) {
	word := statewords.Of(s)
	switch word {
	case statewords.NeedsApproval, statewords.NeedsLogin:
		return "! " + word, styleAsk
	case statewords.Ready:
		return "● " + word, styleOK
	case statewords.Starting, statewords.Waking, statewords.Installing:
		return "◌ " + word, styleWarn
	case statewords.Idle:
		return "◦ " + word, styleDim
	case statewords.Failed, statewords.Unauthorized:
		return "✗ " + word, styleErr
	case statewords.CrashLooping:
		return "↻ " + word, styleErr
	case statewords.Backoff:
		return "↻ " + word, styleWarn
	case statewords.Disabled:
		return "○ " + word, styleDim
	case statewords.Stopped:
		return "■ " + word, styleDim
	}
	return "? " + word, styleWarn
}

// note is the one line the list shows after a server's state: what to do,
// or its last error.
func note(s apitype.ServerStatus) string {
	switch {
	case s.NeedsApproval:
		return "needs approval: press a"
	case s.Auth != nil && s.Auth.Login == "waiting":
		return "login: waiting for the browser"
	case s.Auth != nil && s.Auth.NeedsLogin:
		return "needs login: press l"
	case len(s.Held) > 0:
		return plural(len(s.Held), "tool") + " changed: press a"
	}
	return firstLine(s.LastError)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
