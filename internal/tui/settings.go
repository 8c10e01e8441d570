package tui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// The settings screen (s on the list): the section-wide settings of the
// daemon, the same as `plexus settings`. A switch flips with space or
// enter and is saved at once; a number is typed after enter and saved
// with enter. Every save carries the revision read, as the CLI's does.

// settingsMsg is the settings read or saved.
type settingsMsg struct {
	s     *apitype.Settings
	saved string // what was saved, "" for a read
	err   error
}

// settingRow is one line of the settings screen.
type settingRow struct {
	key, help string
	toggle    bool
}

var settingRows = []settingRow{
	{"face.allowExternalCall", "offer your servers' tools, resources and prompts to clients of Plexus", true},
	{"face.allowWrite", "let clients restart, switch and add servers (an added one waits for you)", true},
	{"callTimeoutMs", "a tool call's timeout in ms, unless the server sets its own", false},
	{"retryMs", "the first retry interval of a failed server in ms", false},
}

func (m *Model) loadSettings() tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		s, err := c.Settings(ctx)
		return settingsMsg{s: s, err: err}
	}
}

func (m *Model) saveSettings(s apitype.Settings, what string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		saved, err := c.SetSettings(ctx, s, s.Revision)
		return settingsMsg{s: saved, saved: what, err: err}
	}
}

func (m *Model) settingsDone(msg settingsMsg) tea.Cmd {
	m.busy = ""
	if msg.err != nil {
		if msg.saved != "" {
			m.errMsg = "saving " + msg.saved + ": " + errText(msg.err)
			return m.loadSettings()
		}
		return nil // the screen says the settings are not known
	}
	m.settings = msg.s
	if msg.saved != "" {
		m.msg, m.errMsg = "saved "+msg.saved+" (revision "+strconv.FormatInt(msg.s.Revision, 10)+")", ""
	}
	return nil
}

// externalCallsOff reports whether clients see none of the servers' tools.
func (m *Model) externalCallsOff() bool {
	return m.settings != nil && (m.settings.Face == nil || !m.settings.Face.AllowExternalCall)
}

func settingValue(s *apitype.Settings, key string) string {
	face := apitype.FaceSettings{}
	if s.Face != nil {
		face = *s.Face
	}
	onOff := func(b bool) string {
		if b {
			return styleOK.Render("● on")
		}
		return styleDim.Render("○ off")
	}
	ms := func(v, def int) string {
		if v == 0 {
			return strconv.Itoa(def) + " (default)"
		}
		return strconv.Itoa(v)
	}
	switch key {
	case "face.allowExternalCall":
		return onOff(face.AllowExternalCall)
	case "face.allowWrite":
		return onOff(face.AllowWrite)
	case "callTimeoutMs":
		return ms(s.CallTimeoutMs, 60000)
	case "retryMs":
		return ms(s.RetryMs, 30000)
	}
	return ""
}

func (m *Model) settingsView(w int) []string {
	lines := []string{"", styleTitle.Render("Settings") + styleDim.Render(" · the daemon's, as `plexus settings` shows them"), ""}
	if m.settings == nil {
		return append(lines, m.spin.View()+" reading the settings…")
	}
	for i, r := range settingRows {
		mark := "  "
		if i == m.setSel {
			mark = styleSelected.Render("› ")
		}
		value := settingValue(m.settings, r.key)
		if m.setEdit != nil && i == m.setSel {
			value = m.setEdit.View()
		}
		lines = append(lines, mark+col(r.key, 24)+" "+value)
		lines = append(lines, "    "+styleDim.Render(r.help))
	}
	profiles := "none"
	if names := slices.Sorted(maps.Keys(m.settings.Profiles)); len(names) > 0 {
		profiles = strings.Join(names, ", ")
	}
	lines = append(lines, "", "  "+col("profiles", 24)+" "+profiles,
		"    "+styleDim.Render("change them with `plexus settings set profiles.NAME '{…}'`"))
	lines = append(lines, policyLines(m.settings.Policy, w)...)
	if m.externalCallsOff() {
		lines = append(lines, "")
		for _, l := range wrap(apitype.ExternalCallOff, w, 3) {
			lines = append(lines, styleWarn.Render(l))
		}
	}
	return lines
}

// maxPolicyLines bounds the rules and limits the settings screen lists.
const maxPolicyLines = 6

// policyLines show mcp.policy: its rules in the order they are tried and
// its limits, at most maxPolicyLines of them.
func policyLines(p *apitype.PolicySettings, w int) []string {
	if p == nil {
		p = &apitype.PolicySettings{}
	}
	summary := "no rules, no limits: every call is allowed"
	if len(p.Rules)+len(p.Limits) > 0 {
		summary = fmt.Sprintf("%d rules, %d limits", len(p.Rules), len(p.Limits))
	}
	any := func(glob string) string {
		if glob == "" {
			return "any"
		}
		return glob
	}
	var items []string
	for i, r := range p.Rules {
		item := fmt.Sprintf("%d. %s: tool %s, client %s, profile %s", i+1, r.Action, any(r.Tool), any(r.Client), any(r.Profile))
		if r.Destructive != nil {
			item += ", destructive " + strconv.FormatBool(*r.Destructive)
		}
		items = append(items, item)
	}
	for _, l := range p.Limits {
		items = append(items, fmt.Sprintf("limit: %d calls per %d ms per client: tool %s, client %s", l.Calls, l.WindowMs, any(l.Tool), any(l.Client)))
	}
	lines := []string{"", "  " + col("policy", 24) + " " + summary}
	for i, item := range items {
		if i == maxPolicyLines {
			lines = append(lines, "    "+fmt.Sprintf("… and %d more (plexus settings show)", len(items)-i))
			break
		}
		lines = append(lines, "    "+ansi.Truncate(item, max(8, w-4), "…"))
	}
	return append(lines, "    "+styleDim.Render("change it with `plexus settings set policy.rules '[…]'`"))
}

func (m *Model) settingsKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.settings == nil || m.busy != "" {
		if msg.String() == "esc" || msg.String() == "q" {
			m.screen = screenList
		}
		return nil
	}
	r := settingRows[m.setSel]
	if m.setEdit != nil {
		switch msg.String() {
		case "esc":
			m.setEdit, m.msg = nil, "nothing changed"
			return nil
		case "enter":
			v := strings.TrimSpace(m.setEdit.Value())
			n, err := strconv.Atoi(v)
			if v == "" {
				n, err = 0, nil
			}
			if err != nil || n < 0 {
				m.errMsg = fmt.Sprintf("%s takes a number of milliseconds (blank for the default), not %q", r.key, v)
				return nil
			}
			s := *m.settings
			if r.key == "callTimeoutMs" {
				s.CallTimeoutMs = n
			} else {
				s.RetryMs = n
			}
			m.setEdit, m.busy = nil, "saving "+r.key+"…"
			return m.saveSettings(s, r.key)
		}
		var cmd tea.Cmd
		*m.setEdit, cmd = m.setEdit.Update(msg)
		return cmd
	}
	switch msg.String() {
	case "esc", "q":
		m.screen = screenList
	case "up", "k":
		m.setSel = max(0, m.setSel-1)
	case "down", "j":
		m.setSel = min(len(settingRows)-1, m.setSel+1)
	case "space", "enter":
		m.msg, m.errMsg = "", ""
		if !r.toggle {
			in := textinput.New()
			in.Placeholder = "ms, blank for the default"
			in.CharLimit = 12
			in.SetWidth(24)
			in.Focus()
			m.setEdit = &in
			return textinput.Blink
		}
		s := *m.settings
		face := apitype.FaceSettings{}
		if s.Face != nil {
			face = *s.Face
		}
		if r.key == "face.allowExternalCall" {
			face.AllowExternalCall = !face.AllowExternalCall
		} else {
			face.AllowWrite = !face.AllowWrite
		}
		s.Face = &face
		m.busy = "saving " + r.key + "…"
		return m.saveSettings(s, r.key)
	}
	return nil
}
