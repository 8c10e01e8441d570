package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// key handles a key press on the current screen.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	var cmd tea.Cmd
	switch m.screen {
	case screenHelp:
		m.screen = screenList
	case screenForm:
		cmd = m.formKey(msg)
	case screenConfirmDelete:
		cmd = m.confirmKey(msg, func(name string) tea.Cmd {
			m.busy = "deleting " + name + " and its credentials…"
			conn := m.order.conn
			return func() tea.Msg {
				wr, err := m.c.DeleteServer(m.ctx, name, 0)
				d := doneMsg{what: "deleted " + name + " and its credentials", err: err, removed: name, conn: conn}
				if wr != nil {
					d.removedAsOf = wr.EventSeq
				}
				return d
			}
		})
	case screenReview:
		cmd = m.confirmKey(msg, func(name string) tea.Cmd {
			s, ok := m.server(name)
			if !ok {
				return nil
			}
			m.busy = "saving your decision on " + name + "…"
			return m.review(s)
		})
	case screenLogin:
		cmd = m.loginKey(msg)
	case screenSettings:
		cmd = m.settingsKey(msg)
	case screenSearch:
		cmd = m.searchKey(msg)
	default:
		cmd = m.listKey(msg)
	}
	return tea.Batch(cmd, m.startSpinner())
}

// pasted puts pasted text (a bracketed paste, as terminals send it) into
// the field being typed in, if any: a PEM key, a URL, a redirect.
func (m *Model) pasted(msg tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case m.screen == screenForm && m.form != nil && !m.form.saving:
		f := m.form
		if f.focus == fTransport || f.choices[f.focus] != nil {
			return nil
		}
		before := f.inputs[f.focus].Value()
		f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
		f.edited(before)
	case m.screen == screenLogin:
		m.paste, cmd = m.paste.Update(msg)
	case m.screen == screenSettings && m.setEdit != nil:
		*m.setEdit, cmd = m.setEdit.Update(msg)
	case m.screen == screenSearch && m.search.ask != nil:
		m.search.ask.input, cmd = m.search.ask.input.Update(msg)
	case m.screen == screenSearch:
		m.search.query, cmd = m.search.query.Update(msg)
	}
	return cmd
}

// confirmKey handles y/n on a confirmation about m.subject.
func (m *Model) confirmKey(msg tea.KeyPressMsg, yes func(name string) tea.Cmd) tea.Cmd {
	switch msg.String() {
	case "y", "Y":
		name := m.subject
		m.screen = screenList
		return yes(name)
	case "n", "N", "esc", "q":
		m.screen = screenList
		m.msg = "nothing changed"
	}
	return nil
}

func (m *Model) formKey(msg tea.KeyPressMsg) tea.Cmd {
	act, cmd := m.form.update(msg)
	switch act {
	case formCancel:
		m.form, m.screen = nil, screenList
		m.msg = "nothing changed"
	case formSave:
		p, err := buildPlan(m.form.values(), m.form.base)
		if err != nil {
			m.form.err = err.Error()
			return nil
		}
		m.form.err, m.form.saving = "", true
		m.form.savingSince, m.form.startLine = time.Now(), ""
		return m.save(p, m.form.editing, m.form.revision)
	}
	return cmd
}

// listKey handles a key on the list.
func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if key.Matches(msg, k.Quit) {
		return tea.Quit
	}
	if key.Matches(msg, k.Help) {
		m.screen = screenHelp
		return nil
	}
	if key.Matches(msg, k.Settings) {
		m.msg, m.errMsg = "", ""
		m.screen, m.setEdit = screenSettings, nil
		return m.loadSettings()
	}
	if key.Matches(msg, k.Search) {
		return m.openSearch()
	}
	if len(m.waiting) > 0 && (msg.String() == "A" || msg.String() == "D") {
		return m.decideOldest(msg.String() == "A")
	}
	if key.Matches(msg, k.New) {
		m.msg, m.errMsg = "", ""
		m.form, m.screen = newForm(), screenForm
		return nil
	}
	if key.Matches(msg, k.Up, k.Down) {
		if key.Matches(msg, k.Up) {
			m.sel = max(0, m.sel-1)
		} else {
			m.sel = min(len(m.servers)-1, m.sel+1)
		}
		return m.toolsOfSelected()
	}
	s, ok := m.selected()
	if !ok || m.busy != "" {
		return nil
	}
	m.msg, m.errMsg = "", ""
	switch {
	case key.Matches(msg, k.Edit):
		return m.openEdit(s.Name)
	case key.Matches(msg, k.Delete):
		m.subject, m.screen = s.Name, screenConfirmDelete
	case key.Matches(msg, k.Toggle):
		return m.setEnabled(s, !s.Enabled)
	case key.Matches(msg, k.Enable):
		if s.Enabled {
			m.msg = s.Name + " is already on"
			return nil
		}
		return m.setEnabled(s, true)
	case key.Matches(msg, k.Restart):
		if !s.Enabled {
			m.errMsg = s.Name + " is switched off: press e to switch it on"
			return nil
		}
		m.busy, m.restarting = "restarting "+s.Name+"…", s.Name
		delete(m.progress, s.Name)
		return m.write("restarted "+s.Name, func(ctx context.Context) (*apitype.WriteResult, error) {
			return m.c.Restart(ctx, s.Name)
		})
	case key.Matches(msg, k.Login):
		if s.Type == serverconf.TypeStdio {
			m.errMsg = s.Name + " runs over stdio: only remote servers log in with OAuth"
			return nil
		}
		m.busy = "starting the login of " + s.Name + "…"
		return m.startLogin(s.Name)
	case key.Matches(msg, k.Review):
		if !s.NeedsApproval && len(s.Held) == 0 {
			m.msg = s.Name + " has nothing waiting for review"
			return nil
		}
		m.subject, m.screen = s.Name, screenReview
	}
	return nil
}

func (m *Model) setEnabled(s apitype.ServerStatus, on bool) tea.Cmd {
	what := fmt.Sprintf("switched %s off", s.Name)
	m.busy = "switching " + s.Name + " off…"
	if on {
		what = fmt.Sprintf("switched %s on", s.Name)
		m.busy = "switching " + s.Name + " on: starting it to check that it works…"
	}
	return m.write(what, func(ctx context.Context) (*apitype.WriteResult, error) {
		return m.c.SetEnabled(ctx, s.Name, on)
	})
}

// loginKey handles the login screen: esc goes back (the daemon keeps
// waiting), enter sends a pasted redirect URL.
func (m *Model) loginKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.screen, m.login = screenList, nil
		return nil
	case "ctrl+y":
		// The URL whole on the clipboard (OSC 52): copying it off the
		// screen would take the line breaks of its wrapping along.
		if m.login == nil {
			return nil
		}
		m.msg = "copied the login URL to the clipboard"
		return tea.SetClipboard(m.login.AuthURL)
	case "enter":
		u := strings.TrimSpace(m.paste.Value())
		if u == "" {
			return nil
		}
		name := m.subject
		m.busy = "completing the login of " + name + "…"
		return m.write("logged in to "+name, func(ctx context.Context) (*apitype.WriteResult, error) {
			return m.c.CompleteLogin(ctx, name, u)
		})
	}
	var cmd tea.Cmd
	m.paste, cmd = m.paste.Update(msg)
	return cmd
}
