package tui

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// screen is what the model shows.
type screen int

const (
	screenList screen = iota
	screenForm
	screenConfirmDelete
	screenReview
	screenLogin
	screenHelp
	screenSettings
	screenSearch
)

// maxStderr is how many stderr lines are kept per server for the detail
// pane (the daemon keeps 200; `plexus logs` shows them all).
const maxStderr = 50

// Model is the /mcp screen. Create it with New and end it with Close, which
// stops its exchanges with the daemon.
type Model struct {
	c      *client.Client
	ctx    context.Context
	cancel context.CancelFunc
	keys   keyMap
	// waiting are the tool calls waiting for the user's approval, oldest
	// first (approvals.go).
	waiting []apitype.CallApproval

	width, height int
	screen        screen

	servers []apitype.ServerStatus // by name
	sel     int
	// progress is each server's latest stderr line since its start began:
	// while a server starts (a first `npx -y` downloads its package), its
	// row shows it.
	progress map[string]string
	// restarting is the server a restart of this screen waits for: the
	// old instance serves until the new one is up, so the row says
	// "ready", and what the new one writes.
	restarting string
	tools      map[string][]string
	stream     *client.EventStream
	// connected is set once the first snapshot arrived.
	connected bool

	form    *form
	subject string // the server a confirmation, review or login is about
	login   *apitype.LoginStart
	// paste takes the redirect URL on a machine whose browser cannot
	// reach the daemon's loopback listener.
	paste textinput.Model

	// busy says what long work runs (R-UI-4): a write the daemon is doing.
	busy     string
	spin     spinner.Model
	spinning bool

	// settings are the daemon's section-wide settings (settings.go); nil
	// until read. setSel is the row selected on the settings screen,
	// setEdit the number being typed there.
	settings *apitype.Settings
	setSel   int
	setEdit  *textinput.Model

	// search is the registry screen's (registry.go); nil until opened.
	search *search

	// order tells answers and events apart by age (order.go).
	order order

	msg    string // the outcome of the last action
	errMsg string // the last error, until the next action
	// lostMsg is the errMsg that losing the daemon put on screen (a lost
	// stream or a failed reconnect); a connection clears it, and only it.
	lostMsg string
}

// New returns the model of a client. ctx bounds every exchange with the
// daemon; Close ends them.
func New(ctx context.Context, c *client.Client) *Model {
	ctx, cancel := context.WithCancel(ctx)
	return &Model{
		c: c, ctx: ctx, cancel: cancel, keys: newKeyMap(),
		width: 80, height: 24,
		tools: map[string][]string{}, progress: map[string]string{},
		spin: spinner.New(spinner.WithSpinner(spinner.MiniDot)),
	}
}

// Close ends the event stream and every request in flight.
func (m *Model) Close() { m.cancel() }

// Init opens the event stream and reads the servers.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.connect(), m.loadSettings()) }

// selected returns the selected server, if any.
func (m *Model) selected() (apitype.ServerStatus, bool) {
	if m.sel < 0 || m.sel >= len(m.servers) {
		return apitype.ServerStatus{}, false
	}
	return m.servers[m.sel], true
}

// server returns the server named name, if listed.
func (m *Model) server(name string) (apitype.ServerStatus, bool) {
	i := slices.IndexFunc(m.servers, func(s apitype.ServerStatus) bool { return s.Name == name })
	if i < 0 {
		return apitype.ServerStatus{}, false
	}
	return m.servers[i], true
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		return m, m.pasted(msg)
	case spinner.TickMsg:
		if !m.needsSpinner() {
			m.spinning = false
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	}
	return m, tea.Batch(m.daemonMsg(msg), m.startSpinner())
}

// daemonMsg handles the answers of the daemon.
func (m *Model) daemonMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case connectedMsg:
		if msg.err != nil {
			m.errMsg = "cannot reach the daemon: " + msg.err.Error() + " (trying again)"
			m.lostMsg = m.errMsg
			return reconnectLater()
		}
		if m.lostMsg != "" && m.errMsg == m.lostMsg {
			m.errMsg = ""
		}
		m.lostMsg = ""
		m.connected, m.stream = true, msg.stream
		m.connectedList(msg.conn, msg.list)
		return tea.Batch(nextEvent(msg.stream), m.toolsOfSelected(), m.fetchApprovals())
	case approvalsMsg:
		if msg.err != nil {
			m.errMsg = errText(msg.err)
			return nil
		}
		m.waiting = msg.list
		if msg.decided != "" {
			m.msg = msg.decided
		}
		return nil
	case reconnectMsg:
		return m.connect()
	case eventMsg:
		return m.event(msg)
	case serversMsg:
		if msg.err == nil {
			m.showList(msg.conn, msg.list)
		}
		return m.toolsOfSelected()
	case toolsMsg:
		m.showTools(msg)
	case editMsg:
		if msg.err != nil {
			m.errMsg = "reading " + msg.name + ": " + msg.err.Error()
			return nil
		}
		cfg, err := decodeStored(msg.sc)
		if err != nil {
			m.errMsg = err.Error()
			return nil
		}
		m.form, m.screen = editForm(msg.name, cfg, msg.sc.Revision), screenForm
	case doneMsg:
		return m.done(msg)
	case settingsMsg:
		return m.settingsDone(msg)
	case registryListMsg, registryPlanMsg:
		return m.registryMsg(msg)
	case loginMsg:
		m.busy = ""
		if msg.err != nil {
			m.errMsg = "login " + msg.server + ": " + errText(msg.err)
			return nil
		}
		m.login, m.subject, m.screen = msg.start, msg.server, screenLogin
		// The redirect carries the authorization code: masked like a secret.
		m.paste = newInput("or paste here the URL the browser was sent to, then enter", true)
		m.paste.Focus()
	}
	return nil
}

// event applies one event of the daemon's stream.
func (m *Model) event(msg eventMsg) tea.Cmd {
	if msg.stream != m.stream {
		return nil // a stream replaced since
	}
	if msg.err != nil {
		if m.ctx.Err() != nil {
			return nil
		}
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(msg.err, &syntax) || errors.As(msg.err, &typ) {
			// An event the model cannot decode: the stream goes on.
			return nextEvent(msg.stream)
		}
		msg.stream.Close()
		m.stream = nil
		m.errMsg = "lost the daemon: " + msg.err.Error() + " (reconnecting)"
		m.lostMsg = m.errMsg
		return reconnectLater()
	}
	ev := msg.ev
	var cmd tea.Cmd
	switch ev.Type {
	case apitype.EventServer:
		if ev.Status != nil {
			if i := m.index(ev.Server); i >= 0 && startingState(ev.Status.State) && m.servers[i].State != ev.Status.State {
				delete(m.progress, ev.Server) // a new start: older lines are not its own
			}
			m.showStatus(*ev.Status, true)
		}
	case apitype.EventServerRemoved:
		m.removed(ev.Server, ev.Seq, true)
	case apitype.EventStderr:
		if f := m.form; f != nil && f.saving && ev.Server == strings.TrimSpace(f.inputs[fName].Value()) {
			f.startLine = ev.Line
		}
		m.progress[ev.Server] = ev.Line
		if i := m.index(ev.Server); i >= 0 {
			s := &m.servers[i]
			s.Stderr = append(s.Stderr, ev.Line)
			if len(s.Stderr) > maxStderr {
				s.Stderr = slices.Clone(s.Stderr[len(s.Stderr)-maxStderr:])
			}
		}
	case apitype.EventHeld:
		if i := m.index(ev.Server); i >= 0 {
			m.servers[i].Held = ev.Held
			if ev.Approval != nil {
				m.servers[i].NeedsApproval, m.servers[i].Approval = true, ev.Approval
			}
		}
	case apitype.EventCatalog:
		cmd = m.refresh()
	case apitype.EventCallApproval:
		cmd = m.fetchApprovals()
	}
	return tea.Batch(nextEvent(msg.stream), cmd)
}

func (m *Model) index(name string) int {
	return slices.IndexFunc(m.servers, func(s apitype.ServerStatus) bool { return s.Name == name })
}

// setServers replaces the list, keeping the selection on the same server.
func (m *Model) setServers(list []apitype.ServerStatus) {
	cur, _ := m.selected()
	m.servers = slices.Clone(list)
	slices.SortFunc(m.servers, func(a, b apitype.ServerStatus) int { return strings.Compare(a.Name, b.Name) })
	m.selectName(cur.Name)
}

func (m *Model) selectName(name string) {
	if i := m.index(name); i >= 0 {
		m.sel = i
	}
	m.sel = max(0, min(m.sel, len(m.servers)-1))
}

func (m *Model) remove(name string) {
	if i := m.index(name); i >= 0 {
		cur, _ := m.selected()
		m.servers = slices.Delete(m.servers, i, i+1)
		m.selectName(cur.Name)
	}
	delete(m.tools, name)
	delete(m.progress, name)
}

// done ends a write.
func (m *Model) done(d doneMsg) tea.Cmd {
	m.busy, m.restarting = "", ""
	if d.err != nil {
		if d.fromForm && m.form != nil {
			// The form says what to do next itself; the daemon's hint is
			// written for the command line (--no-verify).
			m.form.saving, m.form.err = false, d.err.Error()
			return nil
		}
		m.errMsg = errText(d.err)
		return nil
	}
	m.errMsg = ""
	if d.removed != "" {
		if d.conn == m.order.conn {
			m.removed(d.removed, d.removedAsOf, false)
		} else {
			m.remove(d.removed)
		}
		m.msg = d.what
		return nil
	}
	m.msg = d.what
	if d.server != nil {
		// The message says what the write did; the list shows the newest
		// status, which an event may have told since the answer was read.
		if d.conn == m.order.conn {
			m.showStatus(*d.server, false)
		}
		m.msg = d.what + " (" + summary(*d.server) + ")"
		if w := d.server.Warnings; len(w) > 0 {
			m.msg += " · warning: " + firstLine(w[0])
		}
	}
	if d.fromForm || m.screen == screenForm {
		m.form, m.screen = nil, screenList
	}
	if m.screen == screenReview || m.screen == screenLogin {
		m.screen, m.login = screenList, nil
	}
	if d.server != nil {
		m.selectName(d.server.Name)
	}
	return m.toolsOfSelected()
}

// summary is a server's state in a few words: "ready, 4 tools".
func summary(s apitype.ServerStatus) string {
	word, _ := stateLabel(s)
	word = strings.TrimSpace(word[strings.Index(word, " ")+1:])
	if s.State == apitype.StateReady {
		return word + ", " + plural(s.Tools, "tool")
	}
	return word
}

// errText is an error for the screen: the daemon's message, its problems,
// and its hint.
func errText(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Body.Hint != "" {
		return err.Error() + "\n" + ae.Body.Hint
	}
	return err.Error()
}

func (m *Model) toolsOfSelected() tea.Cmd {
	s, ok := m.selected()
	if !ok {
		return nil
	}
	return m.fetchTools(s.Name)
}

// needsSpinner reports whether something is in progress on screen.
func (m *Model) needsSpinner() bool {
	if m.busy != "" || m.form != nil && m.form.saving {
		return true
	}
	if m.screen == screenLogin {
		return true
	}
	for _, s := range m.servers {
		if s.State == apitype.StateStarting {
			return true
		}
	}
	return false
}

func (m *Model) startSpinner() tea.Cmd {
	if m.spinning || !m.needsSpinner() {
		return nil
	}
	m.spinning = true
	return m.spin.Tick
}
