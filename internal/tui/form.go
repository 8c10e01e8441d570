package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// field names one row of the form.
type field int

const (
	fTransport field = iota
	fURL
	fCommand
	fName
	fBearer
	fHeaderName
	fHeaderValue
	fEnv
	fStartup
	// A remote server's OAuth grant and what it needs (formgrant.go).
	fGrant
	fClientID
	fAuthMethod
	fClientSecret
	fPrivateKey
	fPrivateKeyFile
	fTokenFile
	fIDPTokenURL
	fIDPClientID
	fIDPClientSecret
	fIDTokenFile
	fScopes
	// A stdio server's sandbox (formsandbox.go).
	fSandbox
	fSandboxRead
	fSandboxWrite
	fSandboxNet
	fieldCount
)

var fieldLabels = [fieldCount]string{"transport", "url", "command", "name", "bearer token", "header", "header value", "env", "startup ms",
	"oauth grant", "client id", "client auth", "client secret", "private key", "key file", "token file",
	"idp token url", "idp client id", "idp secret", "id token file", "scopes",
	"sandbox", "may read", "may write", "network"}

// form is the one form for a new server and for editing one (R-UI-2):
// nothing is sent until it is saved.
type form struct {
	// editing names the server edited; "" for a new one.
	editing string
	// base is the edited server's stored settings; revision what they were
	// read at, sent back so that a save over a newer change is refused.
	base     map[string]any
	revision int64

	transports []string
	transport  int
	// choices are the options of a choice row other than the transport
	// (the grant, the client authentication, the sandbox), and chosen the
	// index of each row's current one.
	choices [fieldCount][]string
	chosen  [fieldCount]int
	inputs  [fieldCount]textinput.Model
	focus   field
	// nameEdited stops the suggestion: once the person typed a name, it
	// is theirs.
	nameEdited bool

	// urlSecrets are literal keys found in the edited server's stored URL:
	// the form shows ${VAR} in their place, and a save stores them as
	// managed secrets while the URL still refers to them.
	urlSecrets map[string]string

	// from says where a new server's settings came from (a registry
	// entry), shown above the fields; "" for one typed.
	from string

	saving bool
	// savingSince is when the save began, and startLine the latest stderr
	// line of the server it starts: a first start can take long (`npx -y`
	// downloads its package), and the form says how long it has waited.
	savingSince time.Time
	startLine   string
	err         string
}

func newInput(placeholder string, secret bool) textinput.Model {
	ti := textinput.New()
	ti.Prompt = ""
	ti.Placeholder = placeholder
	ti.CharLimit = 4096
	// A static cursor: no blink ticks, and the same screen every time.
	st := ti.Styles()
	st.Cursor.Blink = false
	ti.SetStyles(st)
	if secret {
		ti.EchoMode = textinput.EchoPassword
		ti.EchoCharacter = '•'
	}
	return ti
}

// newForm returns the form for a new server: transport http.
func newForm() *form {
	f := &form{transports: []string{serverconf.TypeHTTP, serverconf.TypeStdio}}
	f.inputs[fURL] = newInput("https://mcp.example.com/mcp", false)
	f.inputs[fCommand] = newInput(`npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`, false)
	f.inputs[fName] = newInput("from the url or command", false)
	f.inputs[fBearer] = newInput("optional, stored as a secret", true)
	f.inputs[fHeaderName] = newInput("optional, such as X-Api-Key", false)
	f.inputs[fHeaderValue] = newInput("its value, stored as a secret", true)
	f.inputs[fEnv] = newInput("optional: KEY=value KEY2=value, stored as secrets", true)
	f.inputs[fStartup] = newInput("blank: the default, 30000 (a first `npx -y` may need more)", false)
	f.newGrantInputs()
	f.newSandboxInputs()
	f.setFocus(fTransport)
	return f
}

// editForm returns the form for a stored server.
func editForm(name string, cfg map[string]any, revision int64) *form {
	f := newForm()
	f.editing, f.base, f.revision, f.nameEdited = name, cfg, revision, true
	f.inputs[fName].SetValue(name)
	typ, _ := cfg[serverconf.KeyType].(string)
	if typ == serverconf.TypeSSE {
		f.transports = []string{serverconf.TypeSSE, serverconf.TypeHTTP, serverconf.TypeStdio}
	}
	if i := slices.Index(f.transports, typ); i >= 0 {
		f.transport = i
	}
	const keep = "stored: blank keeps it, - removes it"
	if u, ok := cfg[serverconf.KeyURL].(string); ok {
		// A key written in the URL is never shown: the field shows the
		// variable it is kept in once saved.
		shown, moved := serverconf.MoveURLSecrets(name, u)
		f.inputs[fURL].SetValue(shown)
		for _, m := range moved {
			if f.urlSecrets == nil {
				f.urlSecrets = map[string]string{}
			}
			f.urlSecrets[m.Var] = m.Value
		}
	}
	if argv := serverconf.Argv(cfg); argv != nil {
		f.inputs[fCommand].SetValue(cmdline.Join(argv))
	}
	if _, ok := cfg[serverconf.KeyBearer]; ok {
		f.inputs[fBearer].Placeholder = keep
	}
	if h := firstHeader(cfg); h != "" {
		f.inputs[fHeaderName].SetValue(h)
		f.inputs[fHeaderValue].Placeholder = keep
	}
	if ms, ok := cfg[serverconf.KeyStartupTimeout].(json.Number); ok {
		f.inputs[fStartup].SetValue(ms.String())
	}
	f.fillGrant(cfg)
	f.fillSandbox(cfg)
	if env, ok := cfg[serverconf.KeyEnv].(map[string]any); ok && len(env) > 0 {
		f.inputs[fEnv].Placeholder = "stored: " + strings.Join(envShown(env), " ") + " (KEY=value sets, KEY=- or - removes)"
	}
	f.setFocus(fURL)
	if f.stdio() {
		f.setFocus(fCommand)
	}
	return f
}

func (f *form) stdio() bool { return f.transports[f.transport] == serverconf.TypeStdio }

// fields are the rows shown for the current transport, in order. The name
// of a server being edited is not a field: renaming is delete and add.
func (f *form) fields() []field {
	fs := append([]field{fTransport, fURL, fName, fBearer, fHeaderName, fHeaderValue}, f.grantFields()...)
	if f.stdio() {
		fs = append([]field{fTransport, fCommand, fName, fEnv}, f.sandboxFields()...)
	}
	if f.editing != "" {
		fs = slices.DeleteFunc(fs, func(x field) bool { return x == fName })
	}
	return append(fs, fStartup)
}

func (f *form) setFocus(to field) {
	for i := range f.inputs {
		f.inputs[i].Blur()
	}
	f.focus = to
	if to != fTransport && f.choices[to] == nil {
		f.inputs[to].Focus()
		f.inputs[to].CursorEnd() // typing goes on after what is there
	}
}

// move moves the focus by d rows, staying within the form.
func (f *form) move(d int) {
	fs := f.fields()
	i := slices.Index(fs, f.focus) + d
	i = max(0, min(len(fs)-1, i))
	f.setFocus(fs[i])
}

func (f *form) last() bool {
	fs := f.fields()
	return f.focus == fs[len(fs)-1]
}

// values returns what was typed.
func (f *form) values() formValues {
	v := func(i field) string { return f.inputs[i].Value() }
	return formValues{
		transport: f.transports[f.transport],
		url:       v(fURL), command: v(fCommand), name: v(fName),
		bearer: v(fBearer), headerName: v(fHeaderName), headerValue: v(fHeaderValue), env: v(fEnv),
		startup:    v(fStartup),
		urlSecrets: f.urlSecrets,
		oauth:      f.grantValues(),
		sandbox:    f.sandboxValues(),
	}
}

// formAction is what a key in the form asks of the model.
type formAction int

const (
	formNone formAction = iota
	formSave
	formCancel
)

// update handles a key in the form.
func (f *form) update(msg tea.KeyPressMsg) (formAction, tea.Cmd) {
	if f.saving {
		return formNone, nil // the daemon is trying the server; wait for it
	}
	switch msg.String() {
	case "esc":
		return formCancel, nil
	case "ctrl+s":
		return formSave, nil
	case "enter":
		if f.last() {
			return formSave, nil
		}
		f.move(1)
		return formNone, nil
	case "tab", "down":
		f.move(1)
		return formNone, nil
	case "shift+tab", "up":
		f.move(-1)
		return formNone, nil
	}
	if f.focus == fTransport {
		switch msg.String() {
		case "left":
			f.transport = (f.transport + len(f.transports) - 1) % len(f.transports)
		case "right", "space":
			f.transport = (f.transport + 1) % len(f.transports)
		default:
			if msg.Text == "" {
				return formNone, nil
			}
			// Typing on the transport row starts the url or command: n
			// and then the URL is all it takes.
			f.move(1)
			return f.update(msg)
		}
		f.suggest()
		return formNone, nil
	}
	if opts := f.choices[f.focus]; opts != nil {
		switch msg.String() {
		case "left":
			f.chosen[f.focus] = (f.chosen[f.focus] + len(opts) - 1) % len(opts)
		case "right", "space":
			f.chosen[f.focus] = (f.chosen[f.focus] + 1) % len(opts)
		}
		return formNone, nil
	}
	before := f.inputs[f.focus].Value()
	var cmd tea.Cmd
	f.inputs[f.focus], cmd = f.inputs[f.focus].Update(msg)
	f.edited(before)
	return formNone, cmd
}

// edited follows a change of the focused field from before: the error
// goes, and the name is suggested again or is the person's own now.
func (f *form) edited(before string) {
	if f.inputs[f.focus].Value() == before {
		return
	}
	f.err = ""
	switch f.focus {
	case fName:
		f.nameEdited = true
	case fURL, fCommand:
		f.suggest()
	}
}

// choice is the option chosen on a choice row.
func (f *form) choice(fl field) string { return f.choices[fl][f.chosen[fl]] }

// choose chooses the option v of a choice row, if it is one.
func (f *form) choose(fl field, v string) {
	if i := slices.Index(f.choices[fl], v); i >= 0 {
		f.chosen[fl] = i
	}
}

// suggest fills the name from the URL's host or the command's package,
// until the person edits the name.
func (f *form) suggest() {
	if f.nameEdited {
		return
	}
	name := ""
	if f.stdio() {
		if argv, err := cmdline.Split(f.inputs[fCommand].Value()); err == nil {
			name = serverconf.NameFromArgv(argv)
		}
	} else {
		name = serverconf.NameFromURL(f.inputs[fURL].Value())
	}
	f.inputs[fName].SetValue(name)
	f.inputs[fName].CursorEnd()
}

// envShown lists a server's env entries for the form: a secret by its name
// only, a plain value (not secret) as KEY=value.
func envShown(env map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(env) {
		if m, ok := env[k].(map[string]any); ok {
			if v, plain := m["value"].(string); plain {
				out = append(out, k+"="+v)
				continue
			}
		}
		out = append(out, k)
	}
	return out
}
