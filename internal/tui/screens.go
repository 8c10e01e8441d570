package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
)

// labelWidth is the width of the form's labels.
const labelWidth = 14

// formView draws the form. Secret fields are drawn by their textinput in
// password mode: only • ever reaches the screen.
func (m *Model) formView(w, h int) []string {
	f := m.form
	lines := []string{""}
	if f.from != "" {
		lines = []string{styleDim.Render(ansi.Truncate(f.from+" · type the secrets, then ctrl+s", w, "…"))}
	}
	for _, fl := range f.fields() {
		mark := "  "
		if fl == f.focus {
			mark = styleSelected.Render("› ")
		}
		label := col(fieldLabels[fl], labelWidth)
		if fl == f.focus {
			label = styleSelected.Render(label)
		}
		var v string
		switch fl {
		case fTransport:
			for i, t := range f.transports {
				if i == f.transport {
					v += styleSelected.Render("["+t+"]") + " "
				} else {
					v += " " + t + "  "
				}
			}
			v += styleDim.Render("← →")
		case fGrant, fAuthMethod, fSandbox:
			v = styleSelected.Render("["+f.choice(fl)+"]") + " " + styleDim.Render("← →")
		default:
			f.inputs[fl].SetWidth(max(10, w-labelWidth-6))
			if fl == fName {
				f.inputs[fl].SetWidth(32) // the longest name, and room for the hint
			}
			v = f.inputs[fl].View()
			if fl == fName && !f.nameEdited && f.inputs[fName].Value() != "" {
				v += styleDim.Render("  (suggested)")
			}
		}
		lines = append(lines, mark+label+v)
		if fl == fEnv {
			if hint := envHint(f.inputs[fEnv].Value()); hint != "" {
				lines = append(lines, strings.Repeat(" ", labelWidth+2)+styleDim.Render(hint))
			}
		}
	}
	lines = append(lines, "")
	switch {
	case f.saving:
		what := "starting the server"
		if n := strings.TrimSpace(f.inputs[fName].Value()); n != "" {
			what = "starting " + n
		}
		waited := ""
		if d := time.Since(f.savingSince); !f.savingSince.IsZero() && d >= time.Second {
			waited = fmt.Sprintf(" %ds", int(d.Seconds()))
		}
		lines = append(lines, m.spin.View()+" "+what+" to check that it works…"+waited)
		if l := firstLine(f.startLine); l != "" {
			lines = append(lines, styleDim.Render(ansi.Truncate("  stderr: "+ansi.Strip(l), max(1, w-2), "…")))
		}
	case f.err != "":
		for _, l := range wrap("error: "+f.err, w-2, max(1, h-len(lines)-3)) {
			lines = append(lines, styleErr.Render(l))
		}
		lines = append(lines, styleDim.Render("Nothing was saved. Fix the form and press ctrl+s again, or esc."))
	default:
		lines = append(lines, styleDim.Render("Nothing is written until ctrl+s. The daemon starts the server first."))
	}
	return lines
}

// envHint names what the env field will set and remove: names, never
// values.
func envHint(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	entries, removeAll, err := parseEnv(v)
	switch {
	case err != nil:
		return "not yet KEY=value: " + strings.TrimPrefix(err.Error(), "env: ")
	case removeAll:
		return "removes every variable"
	}
	var set, rm []string
	for _, e := range entries {
		if e.value == removeMark {
			rm = append(rm, e.key)
		} else {
			set = append(set, e.key)
		}
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, "sets "+strings.Join(set, ", "))
	}
	if len(rm) > 0 {
		parts = append(parts, "removes "+strings.Join(rm, ", "))
	}
	return strings.Join(parts, "; ")
}

// reviewView shows what changed before anything is accepted (R-CAT-6).
func (m *Model) reviewView(w int) []string {
	s, ok := m.server(m.subject)
	if !ok {
		return []string{"", "  " + m.subject + " is gone."}
	}
	lines := []string{"", styleTitle.Render("Review " + s.Name)}
	if s.NeedsApproval && s.Approval != nil {
		a := s.Approval
		lines = append(lines, wrap("needs approval: "+a.Reason, w, 2)...)
		lines = append(lines, "", "now:      "+definition(a.Current))
		if a.Approved != nil {
			lines = append(lines, "approved: "+definition(*a.Approved))
		} else {
			lines = append(lines, "approved: never: added by an agent or by hand")
		}
	}
	for _, h := range s.Held {
		lines = append(lines, "", styleSelected.Render("tool "+h.Tool)+": "+h.Reason)
		if len(h.Changed) > 0 {
			lines = append(lines, "  changed: "+strings.Join(h.Changed, ", "))
		}
		if h.Old != nil {
			lines = append(lines, wrap("  was: "+firstLine(h.Old.Description), w, 2)...)
		}
		lines = append(lines, wrap("  now: "+firstLine(h.New.Description), w, 2)...)
	}
	return lines
}

// definition is what trust in a server is bound to, on one line.
func definition(d apitype.ServerDefinition) string {
	var parts []string
	if d.URL != "" {
		parts = append(parts, d.URL)
	}
	if len(d.Command) > 0 {
		parts = append(parts, cmdline.Join(d.Command))
	}
	if len(d.Env) > 0 {
		names := make([]string, 0, len(d.Env))
		for k := range d.Env {
			names = append(names, k)
		}
		slices.Sort(names)
		parts = append(parts, "env "+strings.Join(names, ","))
	}
	if len(d.HeaderNames) > 0 {
		parts = append(parts, "headers "+strings.Join(d.HeaderNames, ","))
	}
	return strings.Join(parts, " · ")
}

// loginView shows the URL to open and follows the login through the
// server's status (R-UI-4: OAuth waiting for the browser).
func (m *Model) loginView(w int) []string {
	lines := []string{"", styleTitle.Render("Log in to " + m.subject), "", "Open this URL in a browser (ctrl+y copies it whole):", ""}
	if m.login != nil {
		// Hard-wrapped, not cut: every character is needed. Each line is
		// also a hyperlink (OSC 8) to the whole URL, so that a terminal
		// that knows them opens or copies it whole.
		lines = append(lines, hyperlinkLines(m.login.AuthURL, w)...)
	}
	lines = append(lines, "")
	s, _ := m.server(m.subject)
	switch a := s.Auth; {
	case a != nil && a.Login == "failed":
		lines = append(lines, styleErr.Render("✗ login failed: "+a.LoginError))
	case a != nil && a.LoggedIn && a.Login == "":
		lines = append(lines, styleOK.Render("● logged in")+" · "+s.Name+" is "+summary(s))
	default:
		lines = append(lines, m.spin.View()+" waiting for the browser…")
	}
	m.paste.SetWidth(max(10, w-4))
	return append(lines, "", "> "+m.paste.View(), "",
		styleDim.Render("esc goes back to the list; the daemon keeps waiting for the login."))
}

// hyperlinkLines is url wrapped to width w, every line an OSC 8 hyperlink
// to the whole of it, all with one id so that terminals treat them as one
// link. A URL with a control character (which could end the sequence) is
// only wrapped.
func hyperlinkLines(url string, w int) []string {
	lines := strings.Split(wrapHard(url, w), "\n")
	if strings.ContainsFunc(url, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
		return lines
	}
	for i, l := range lines {
		lines[i] = ansi.SetHyperlink(url, "id=plexus-login") + l + ansi.ResetHyperlink()
	}
	return lines
}
