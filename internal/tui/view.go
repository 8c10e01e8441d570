package tui

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// View is the screen (frame) on the alternate screen, with the mouse off.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = true
	return v
}

// frame draws the screen: a title line, the body of the current screen, a
// status area and a footer, exactly m.height lines of at most m.width.
func (m *Model) frame() string {
	w, h := max(m.width, 40), max(m.height, 12)
	status := m.statusLines(w)
	bodyH := h - 2 - len(status)
	var body []string
	switch m.screen {
	case screenForm:
		body = m.formView(w, bodyH)
	case screenHelp:
		body = strings.Split(helpText, "\n")
	case screenReview:
		body = m.reviewView(w)
	case screenLogin:
		body = m.loginView(w)
	case screenSettings:
		body = m.settingsView(w)
	case screenSearch:
		body = m.searchView(w, bodyH)
	default:
		body = m.listView(w, bodyH)
	}
	lines := []string{m.titleLine(w)}
	lines = append(lines, fit(body, bodyH)...)
	lines = append(lines, status...)
	lines = append(lines, m.footerLine())
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	return strings.Join(lines, "\n")
}

// fit pads or cuts lines to exactly n.
func fit(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

func (m *Model) titleLine(w int) string {
	left := styleTitle.Render("plexus") + " · /mcp"
	switch {
	case m.screen == screenForm && m.form.editing != "":
		left += " › edit " + m.form.editing
	case m.screen == screenForm:
		left += " › new server"
	case m.screen == screenHelp:
		left += " › help"
	case m.screen == screenSettings:
		left += " › settings"
	case m.screen == screenSearch:
		left += " › registry"
	}
	ready, starting := 0, 0
	for _, s := range m.servers {
		switch s.State {
		case apitype.StateReady:
			ready++
		case apitype.StateStarting:
			starting++
		}
	}
	right := plural(len(m.servers), "server") + " · " + strconv.Itoa(ready) + " ready"
	if starting > 0 {
		// R-UI-4: connecting N servers shows as progress.
		right = m.spin.View() + " connecting " + strconv.Itoa(starting) + " · " + right
	}
	if !m.connected {
		right = "connecting to the daemon…"
	}
	return pad(left, right, w)
}

// pad puts right at the right edge of a line of width w.
func pad(left, right string, w int) string {
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return left + " " + right
	}
	return left + strings.Repeat(" ", gap) + right
}

// statusLines are the outcome of the last action, a question, or the
// progress of long work.
func (m *Model) statusLines(w int) []string {
	switch {
	case m.screen == screenConfirmDelete:
		return []string{styleAsk.Render("Delete " + m.subject + " and its credentials? y delete · n keep it")}
	case m.screen == screenReview:
		return []string{styleAsk.Render("Accept what " + m.subject + " shows now? y accept · n leave it waiting")}
	case m.busy != "":
		return []string{m.spin.View() + " " + m.busy}
	case m.errMsg != "":
		lines := wrap("error: "+m.errMsg, w, 3)
		for i := range lines {
			lines[i] = styleErr.Render(lines[i])
		}
		return lines
	}
	if m.screen == screenList && m.errMsg == "" && len(m.waiting) > 0 {
		return []string{m.waitingLine()}
	}
	if m.msg == "" && m.screen == screenList && m.externalCallsOff() {
		return []string{styleWarn.Render("external calls are off: clients see only plexus_status/_snapshot · s settings")}
	}
	return []string{m.msg}
}

func (m *Model) footerLine() string {
	k := m.keys
	switch m.screen {
	case screenForm:
		return footerKeys("ctrl+s", "save", "tab", "next", "← →", "transport", "esc", "cancel")
	case screenConfirmDelete, screenReview:
		return footerKeys("y", "yes", "n", "no")
	case screenLogin:
		return footerKeys("ctrl+y", "copy the URL", "enter", "send the pasted URL", "esc", "back to the list")
	case screenHelp:
		return footerKeys("any key", "close")
	case screenSettings:
		if m.setEdit != nil {
			return footerKeys("enter", "save", "esc", "cancel")
		}
		return footerKeys("↑ ↓", "move", "space", "switch or edit", "esc", "back to the list")
	case screenSearch:
		if m.search != nil && m.search.ask != nil {
			return footerKeys("enter", "next", "esc", "cancel")
		}
		return footerKeys("type", "a name", "enter", "search, or add the one chosen", "↑ ↓", "choose", "esc", "back")
	}
	s, ok := m.selected()
	if !ok {
		return footer(k.New, k.Search, k.Help, k.Quit)
	}
	bs := []key.Binding{k.New, k.Edit, k.Delete, k.Toggle}
	switch {
	case s.NeedsApproval || len(s.Held) > 0:
		bs = append(bs, k.Review)
	case s.Auth != nil && s.Auth.NeedsLogin:
		bs = append(bs, k.Login)
	case !s.Enabled:
		bs = append(bs, k.Enable)
	default:
		bs = append(bs, k.Restart)
	}
	return footer(append(bs, k.Help, k.Quit)...)
}

// wrap wraps s to width w, at most n lines (the last one cut with …).
func wrap(s string, w, n int) []string {
	lines := strings.Split(ansi.Wrap(strings.TrimSpace(s), w, " /,"), "\n")
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = ansi.Truncate(lines[n-1]+" …", w, "…")
	}
	return lines
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
