package tui

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// The registry screen (/ on the list): the MCP registry searched through
// the daemon, as `plexus search` does; enter on a result asks the daemon
// for its plan (`plexus add --from-registry`), asks for the required
// values it lacks, and opens the one form filled from the plan, where the
// secrets are typed masked and the save is the form's.

// search is the registry screen's state.
type search struct {
	query   textinput.Model
	asked   string // the query of the results shown
	results *apitype.RegistryList
	sel     int
	// ask is the value being asked for before the form opens.
	ask *regAsk
}

// regAsk asks, one at a time, for the required values a plan lacks.
type regAsk struct {
	plan   *apitype.RegistryPlan
	keys   []string
	i      int
	values map[string][]string
	input  textinput.Model
}

// registryListMsg is a search's answer; registryPlanMsg a plan's.
type registryListMsg struct {
	query string
	list  *apitype.RegistryList
	err   error
}

type registryPlanMsg struct {
	plan *apitype.RegistryPlan
	err  error
}

func newSearch() *search {
	q := newInput("a server's name, such as github or memory; enter searches", false)
	q.Focus()
	return &search{query: q}
}

func (m *Model) openSearch() tea.Cmd {
	m.msg, m.errMsg = "", ""
	if m.search == nil {
		m.search = newSearch()
	}
	m.screen = screenSearch
	if m.search.results == nil {
		return m.runSearch("")
	}
	return nil
}

func (m *Model) runSearch(q string) tea.Cmd {
	c, ctx := m.c, m.ctx
	m.busy = "asking the MCP registry…"
	return func() tea.Msg {
		list, err := c.SearchRegistry(ctx, client.RegistryQuery{Search: q})
		return registryListMsg{query: q, list: list, err: err}
	}
}

func (m *Model) planRegistry(req apitype.RegistryPlanRequest) tea.Cmd {
	c, ctx := m.c, m.ctx
	m.busy = "asking the daemon what " + req.Name + " needs…"
	return func() tea.Msg {
		p, err := c.PlanRegistry(ctx, req)
		return registryPlanMsg{plan: p, err: err}
	}
}

// registryMsg handles the registry's answers.
func (m *Model) registryMsg(msg tea.Msg) tea.Cmd {
	s := m.search
	switch msg := msg.(type) {
	case registryListMsg:
		m.busy = ""
		if msg.err != nil {
			m.errMsg = "searching the MCP registry: " + errText(msg.err)
			return nil
		}
		if s != nil {
			s.results, s.asked, s.sel = msg.list, msg.query, 0
		}
	case registryPlanMsg:
		m.busy = ""
		if msg.err != nil {
			m.errMsg = errText(msg.err)
			return nil
		}
		p := msg.plan
		if len(p.Missing) > 0 && s != nil {
			a := s.ask
			if a == nil {
				a = &regAsk{values: map[string][]string{}}
			}
			a.plan, a.keys, a.i = p, p.Missing, 0
			a.input = newInput("", false)
			a.input.Focus()
			s.ask = a
			return nil
		}
		if s != nil {
			s.ask = nil
		}
		m.form, m.screen = registryForm(p), screenForm
		if p.NameTaken {
			m.form.err = "a server named " + p.Server + " exists already: give this one another name"
		}
	}
	return nil
}

// searchKey handles a key on the registry screen.
func (m *Model) searchKey(msg tea.KeyPressMsg) tea.Cmd {
	s := m.search
	if m.busy != "" {
		return nil
	}
	if a := s.ask; a != nil {
		switch msg.String() {
		case "esc":
			s.ask, m.msg = nil, "nothing added"
			return nil
		case "enter":
			key := a.keys[a.i]
			v := strings.TrimSpace(a.input.Value())
			if v == "" {
				v = fieldOf(a.plan, key).Default
			}
			if v == "" {
				m.errMsg = fieldOf(a.plan, key).Label + " is required"
				return nil
			}
			m.errMsg = ""
			a.values[key] = []string{v}
			if a.i+1 < len(a.keys) {
				a.i++
				a.input = newInput("", false)
				a.input.Focus()
				return nil
			}
			return m.planRegistry(apitype.RegistryPlanRequest{Name: a.plan.Name, Version: a.plan.Version, Values: a.values})
		}
		var cmd tea.Cmd
		a.input, cmd = a.input.Update(msg)
		return cmd
	}
	switch msg.String() {
	case "esc":
		m.screen = screenList
		return nil
	case "up":
		s.sel = max(0, s.sel-1)
		return nil
	case "down":
		if s.results != nil {
			s.sel = min(len(s.results.Servers)-1, s.sel+1)
		}
		return nil
	case "enter":
		m.msg, m.errMsg = "", ""
		q := strings.TrimSpace(s.query.Value())
		if s.results == nil || q != s.asked {
			return m.runSearch(q)
		}
		if s.sel >= len(s.results.Servers) {
			return nil
		}
		e := s.results.Servers[s.sel]
		if !runnable(e) {
			m.errMsg = e.Name + ": Plexus cannot run it — " + e.Options[0].Reason
			return nil
		}
		return m.planRegistry(apitype.RegistryPlanRequest{Name: e.Name, Version: e.Version})
	}
	var cmd tea.Cmd
	s.query, cmd = s.query.Update(msg)
	return cmd
}

func runnable(e apitype.RegistryServer) bool {
	for _, o := range e.Options {
		if o.Runnable {
			return true
		}
	}
	return false
}

func fieldOf(p *apitype.RegistryPlan, key string) apitype.RegistryField {
	for _, f := range p.Fields {
		if f.Key == key {
			return f
		}
	}
	return apitype.RegistryField{Key: key, Label: key}
}

// searchView draws the registry screen.
func (m *Model) searchView(w, h int) []string {
	s := m.search
	lines := []string{"", styleTitle.Render("Find servers in the MCP registry")}
	if a := s.ask; a != nil {
		f := fieldOf(a.plan, a.keys[a.i])
		lines = append(lines, "", "Adding "+a.plan.Name+" needs "+f.Label+":")
		if f.Description != "" {
			lines = append(lines, wrap("  "+f.Description, w, 2)...)
		}
		if len(f.Choices) > 0 {
			lines = append(lines, styleDim.Render("  one of "+strings.Join(f.Choices, ", ")))
		}
		if f.Default != "" {
			lines = append(lines, styleDim.Render("  blank takes the default, "+f.Default))
		}
		a.input.SetWidth(max(10, w-6))
		return append(lines, "", "> "+a.input.View())
	}
	s.query.SetWidth(max(10, w-12))
	lines = append(lines, "search  "+s.query.View())
	r := s.results
	if r == nil {
		return lines
	}
	lines = append(lines, styleDim.Render(sourceLine(r.Source)))
	if len(r.Servers) == 0 {
		return append(lines, "", "  No server of the registry has that in its name.")
	}
	rows := min(len(r.Servers), max(3, h-len(lines)-7))
	first := max(0, min(s.sel-rows+1, len(r.Servers)-rows))
	for i := first; i < first+rows && i < len(r.Servers); i++ {
		e := r.Servers[i]
		mark, name := "  ", col(e.Name, 44)
		if i == s.sel {
			mark, name = "› ", styleSelected.Render(name)
		}
		lines = append(lines, mark+name+" "+col(e.Version, 10)+" "+col(runs(e), 18)+" "+
			styleDim.Render(ansi.Truncate(e.Description, max(1, w-78), "…")))
	}
	if s.sel < len(r.Servers) {
		e := r.Servers[s.sel]
		lines = append(lines, styleDim.Render(strings.Repeat("─", w)))
		title := e.Name + " " + e.Version
		if e.Title != "" {
			title = e.Title + " · " + title
		}
		if e.Status == "deprecated" || e.Status == "deleted" {
			title += " · " + e.Status
		}
		lines = append(lines, styleTitle.Render(title))
		lines = append(lines, wrap(e.Description, w, 2)...)
		for _, o := range e.Options {
			line := ansi.Truncate("  "+strconv.Itoa(o.Index)+" "+o.Kind+" "+o.Label, w, "…")
			if o.Runnable {
				lines = append(lines, line)
				continue
			}
			lines = append(lines, styleDim.Render(line))
			for _, l := range wrap("not here: "+o.Reason, w-6, 2) {
				lines = append(lines, styleDim.Render("      "+l))
			}
		}
	}
	return lines
}

// runs says how a registry server can run: what Plexus runs, and in
// parentheses what it does not.
func runs(e apitype.RegistryServer) string {
	var can, cannot []string
	for _, o := range e.Options {
		if o.Runnable && !contains(can, o.Kind) {
			can = append(can, o.Kind)
		}
	}
	for _, o := range e.Options {
		if !o.Runnable && !contains(can, o.Kind) && !contains(cannot, o.Kind) {
			cannot = append(cannot, o.Kind)
		}
	}
	out := strings.Join(can, ",")
	if len(cannot) > 0 {
		out += " (not " + strings.Join(cannot, ",") + ")"
	}
	return strings.TrimSpace(out)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// sourceLine says where the results came from, and how old they are.
func sourceLine(src apitype.RegistrySource) string {
	age := (time.Duration(src.AgeMs) * time.Millisecond).Round(time.Second)
	switch {
	case src.Offline:
		return "offline: " + firstLine(src.Reason) + "; its answer of " + age.String() + " ago"
	case src.Cached:
		return "from " + src.Registry + ", as it answered " + age.String() + " ago"
	}
	return "from " + src.Registry
}

// registryForm is the form for a new server filled from a registry
// server's plan: the settings as the plan has them (the form keeps what
// it does not show), the command or URL, the name, and for each secret the
// field it is typed in, described.
func registryForm(p *apitype.RegistryPlan) *form {
	var cfg map[string]any
	dec := json.NewDecoder(strings.NewReader(string(p.Config)))
	dec.UseNumber()
	if dec.Decode(&cfg) != nil {
		cfg = map[string]any{}
	}
	f := newForm()
	f.base, f.nameEdited = cfg, true
	f.from = p.Name + " " + p.Version + " from the MCP registry (" + p.Option.Kind + " " + p.Option.Label + ")"
	f.inputs[fName].SetValue(p.Server)
	typ, _ := cfg[serverconf.KeyType].(string)
	if typ == serverconf.TypeSSE {
		f.transports = []string{serverconf.TypeSSE, serverconf.TypeHTTP, serverconf.TypeStdio}
	}
	for i, t := range f.transports {
		if t == typ {
			f.transport = i
		}
	}
	secrets := map[string]apitype.RegistryField{}
	for _, fl := range p.Fields {
		if fl.Secret && fl.Var != "" {
			secrets[fl.Var] = fl
		}
	}
	describe := func(v string) string {
		fl, ok := secrets[v]
		if !ok {
			return ""
		}
		what := "optional"
		if fl.Required {
			what = "required"
		}
		if fl.Stored {
			what = "stored: blank keeps it"
		}
		if fl.Description != "" {
			what += ": " + fl.Description
		}
		return what
	}
	if u, ok := cfg[serverconf.KeyURL].(string); ok {
		f.inputs[fURL].SetValue(u)
	}
	if argv := serverconf.Argv(cfg); argv != nil {
		f.inputs[fCommand].SetValue(cmdline.Join(argv))
	}
	if v, ok := cfg[serverconf.KeyBearer].(string); ok {
		f.inputs[fBearer].Placeholder = describe(v)
	}
	if h := firstHeader(cfg); h != "" {
		f.inputs[fHeaderName].SetValue(h)
		f.inputs[fHeaderValue].Placeholder = describe(serverconf.EnvRef(cfg[serverconf.KeyHeaders].(map[string]any)[h]))
	}
	if env, ok := cfg[serverconf.KeyEnv].(map[string]any); ok {
		var ask []string
		for _, k := range sortedKeys(env) {
			if v := serverconf.EnvRef(env[k]); v != "" {
				ask = append(ask, k+" ("+describe(v)+")")
			}
		}
		if len(ask) > 0 {
			f.inputs[fEnv].Placeholder = "secrets as KEY=value: " + strings.Join(ask, ", ")
		}
	}
	f.setFocus(fName)
	return f
}
