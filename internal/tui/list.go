package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
)

// Column widths of the list; the last error takes what is left.
const (
	colName      = 16
	colState     = 20 // "◌ starting on demand"
	colTransport = 9
	colTools     = 5
)

// listView is the list of servers over the detail pane of the selected one.
func (m *Model) listView(w, h int) []string {
	if !m.connected {
		return []string{"", "  Connecting to the daemon…"}
	}
	if len(m.servers) == 0 {
		return []string{"", "  No servers yet. Press / to find one in the MCP registry, n to add one by hand, ? for help."}
	}
	head := "  " + col("NAME", colName) + " " + col("STATE", colState) + " " + col("TRANSPORT", colTransport) + " " +
		right("TOOLS", colTools) + "  LAST ERROR"
	lines := []string{styleDim.Render(head)}
	rows := min(len(m.servers), max(3, h/2-2))
	first := max(0, min(m.sel-rows+1, len(m.servers)-rows))
	if m.sel < first {
		first = m.sel
	}
	for i := first; i < first+rows && i < len(m.servers); i++ {
		lines = append(lines, m.row(i, w))
	}
	lines = append(lines, styleDim.Render(strings.Repeat("─", w)))
	s, _ := m.selected()
	return append(lines, m.detail(s, w, h-len(lines))...)
}

func col(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

func right(s string, w int) string {
	return strings.Repeat(" ", max(0, w-ansi.StringWidth(s))) + s
}

// row is one server: its state in a word and a colour, never colour alone.
func (m *Model) row(i, w int) string {
	s := m.servers[i]
	mark, name := "  ", col(s.Name, colName)
	if i == m.sel {
		mark, name = "› ", styleSelected.Render(name)
	}
	word, st := stateLabel(s)
	fixed := 2 + colName + 1 + colState + 1 + colTransport + 1 + colTools + 2
	n := note(s)
	if p := m.startNote(s); p != "" && (n == "" || n == firstLine(s.LastError)) {
		n = p
	}
	line := mark + name + " " + st.Render(col(word, colState)) + " " + col(s.Type, colTransport) + " " +
		right(strconv.Itoa(s.Tools), colTools) + "  "
	if n != "" {
		ns := styleDim
		if s.LastError != "" && n == firstLine(s.LastError) {
			ns = styleErr
		}
		line += ns.Render(ansi.Truncate(n, max(1, w-fixed), "…"))
	}
	return line
}

// startNote is what a starting server's row says after its state: its
// latest stderr line since the start began (a download's progress), and
// for a restart of this screen, that it restarts; "" otherwise.
func (m *Model) startNote(s apitype.ServerStatus) string {
	line := firstLine(m.progress[s.Name])
	switch {
	case s.Name == m.restarting && line != "":
		return "restarting: " + line
	case s.Name == m.restarting:
		return "restarting…"
	case startingState(s.State):
		return line
	}
	return ""
}

// startingState: a server in state is being started.
func startingState(state string) bool {
	return state == apitype.StateStarting || state == apitype.StateWaking
}

// detail is the pane under the list: what the server is and what it said.
func (m *Model) detail(s apitype.ServerStatus, w, h int) []string {
	word, st := stateLabel(s)
	title := styleTitle.Render(s.Name) + " · " + s.Type + " · " + st.Render(word)
	if s.ServerInfo != "" {
		title += " · " + s.ServerInfo
	}
	lines := []string{title}
	add := func(label, v string, n int) {
		if v == "" {
			return
		}
		for i, l := range wrap(v, w-10, n) {
			if i == 0 {
				lines = append(lines, styleDim.Render(col(label, 9))+" "+l)
			} else {
				lines = append(lines, strings.Repeat(" ", 10)+l)
			}
		}
	}
	add("url", s.URL, 2)
	add("command", cmdline.Join(s.Command), 2)
	add("headers", strings.Join(s.HeaderNames, ", "), 1)
	add("env", strings.Join(s.EnvNames, ", "), 1)
	add("sandbox", s.Sandbox, 2)
	if names, ok := m.tools[s.Name]; ok && s.State == apitype.StateReady {
		add("tools", strings.Join(names, ", "), 2)
	} else if s.Tools > 0 {
		add("tools", strconv.Itoa(s.Tools), 1)
	}
	if a := s.Auth; a != nil {
		add("auth", authLine(a), 2)
	}
	if s.NeedsApproval && s.Approval != nil {
		add("approval", s.Approval.Reason+": press a to review", 2)
	}
	if len(s.Held) > 0 {
		add("held", plural(len(s.Held), "tool")+" changed since accepted: press a to review", 1)
	}
	if s.LastError != "" {
		start := len(lines)
		add("error", s.LastError, 3)
		for i := start; i < len(lines); i++ {
			lines[i] = styleErr.Render(lines[i])
		}
	}
	if room := h - len(lines) - 1; room > 0 && len(s.Stderr) > 0 {
		lines = append(lines, styleDim.Render("stderr"))
		tail := s.Stderr[max(0, len(s.Stderr)-room):]
		for _, l := range tail {
			lines = append(lines, "  "+ansi.Truncate(l, w-2, "…"))
		}
	}
	return lines
}

// authLine is a server's OAuth state in words.
func authLine(a *apitype.AuthStatus) string {
	switch {
	case a.Login == "waiting":
		return "login waiting for the browser"
	case a.Login == "failed":
		return "login failed: " + a.LoginError
	case a.NeedsLogin:
		return "needs login: press l"
	case a.LoggedIn && a.Issuer != "":
		return "logged in at " + a.Issuer
	case a.LoggedIn:
		return "logged in"
	}
	return "OAuth"
}
