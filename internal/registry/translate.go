package registry

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// Request says how to translate a registry server.
type Request struct {
	// Server is the Plexus name it gets; "" is SuggestName's. It names
	// the managed variables its secrets are kept in.
	Server string
	// Option picks the way to run it (Option.Index); 0 is the first one
	// Plexus can run.
	Option int
	// Values are the inputs a person gave, by Field.Key (or by the part
	// after its colon, when that names one input): several for a repeated
	// argument.
	Values map[string][]string
	// Secrets are the optional secret inputs the person gives (or that
	// are stored already), by key: the configuration refers to them. A
	// required secret is always referred to.
	Secrets map[string]bool
	// Home is the user's home folder, for a path given as ~/….
	Home string
}

// Field is one input of the chosen option that a person may give.
type Field struct {
	// Key names it in Request.Values: env:NAME, header:NAME, arg:HINT
	// (a positional argument's valueHint, or #N), arg:--flag, var:NAME (a
	// variable of a fixed value or of a remote's URL).
	Key string
	// Label is how people know it: the variable, header, flag or hint.
	Label       string
	Description string
	Required    bool
	Secret      bool
	Repeated    bool
	// Format is string, number, boolean or filepath.
	Format      string
	Default     string
	Choices     []string
	Placeholder string
	// Value is what the configuration uses: given, or the default of a
	// required input. Never set for a secret.
	Value []string
	// Var is the managed variable a secret is kept in.
	Var string
	// Omitted says why a secret argument is left out ("" otherwise).
	Omitted string
}

// Plan is a registry server translated into a Plexus server.
type Plan struct {
	Server string
	Option Option
	Config config.Server
	// Fields are the inputs a person may give, in the document's order.
	Fields []Field
	// Missing are the keys of required inputs without a value (secrets
	// are not among them: they are given with the save).
	Missing []string
	// Notes say what the translation chose or left out.
	Notes []string
}

// RefusedError is an option Plexus cannot run.
type RefusedError struct {
	Option Option
	// Others are the options Plexus can run instead.
	Others []Option
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("option %d (%s %s) cannot be added: %s", e.Option.Index, e.Option.Kind, e.Option.Label, e.Option.Reason)
	if len(e.Others) == 0 {
		return msg + "; this server offers nothing else Plexus can run"
	}
	var alt []string
	for _, o := range e.Others {
		alt = append(alt, fmt.Sprintf("%d (%s %s)", o.Index, o.Kind, o.Label))
	}
	return msg + "; it also offers option " + strings.Join(alt, ", ")
}

// InputError is a value that does not fit its input.
type InputError struct {
	Key string
	Msg string
}

func (e *InputError) Error() string { return e.Key + ": " + e.Msg }

// Translate turns registry server s into a Plexus server, as req says.
func Translate(s Server, req Request) (*Plan, error) {
	opts := Options(s)
	if len(opts) == 0 {
		return nil, fmt.Errorf("server %s lists no package and no remote: there is nothing to run", s.Name)
	}
	var chosen Option
	switch {
	case req.Option == 0:
		i := slices.IndexFunc(opts, func(o Option) bool { return o.Runnable })
		if i < 0 {
			return nil, &RefusedError{Option: opts[0]}
		}
		chosen = opts[i]
	case req.Option < 0 || req.Option > len(opts):
		return nil, &InputError{Key: "option", Msg: fmt.Sprintf("server %s offers options 1 to %d", s.Name, len(opts))}
	default:
		chosen = opts[req.Option-1]
		if !chosen.Runnable {
			var others []Option
			for _, o := range opts {
				if o.Runnable {
					others = append(others, o)
				}
			}
			return nil, &RefusedError{Option: chosen, Others: others}
		}
	}
	if req.Server == "" {
		req.Server = SuggestName(s.Name)
	}
	// A first pass learns the inputs, by which the values' keys are
	// resolved; the second makes the configuration of them.
	probe := newTranslator(s, req, nil)
	if err := probe.run(chosen); err != nil {
		return nil, err
	}
	values, err := resolveKeys(req.Values, probe.plan.Fields)
	if err != nil {
		return nil, err
	}
	t := newTranslator(s, req, values)
	if err := t.run(chosen); err != nil {
		return nil, err
	}
	t.plan.Option = chosen
	if len(t.plan.Missing) == 0 {
		// What the registry says must make a server Plexus accepts; the
		// daemon checks again when it is saved.
		f := &config.File{MCP: config.MCP{Servers: map[string]config.Server{req.Server: t.plan.Config}}}
		if err := config.Validate(f); err != nil {
			return nil, fmt.Errorf("server %s does not translate into valid settings: %w", s.Name, err)
		}
	}
	return t.plan, nil
}

// resolveKeys maps each given key to a field's key: itself, or the one
// field whose key ends in ":"+key (a header by any case).
func resolveKeys(given map[string][]string, fields []Field) (map[string][]string, error) {
	out := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		key := k
		if !slices.ContainsFunc(fields, func(f Field) bool { return f.Key == k }) {
			var hits []string
			for _, f := range fields {
				_, short, _ := strings.Cut(f.Key, ":")
				if short == k || strings.HasPrefix(f.Key, "header:") && strings.EqualFold(short, k) {
					hits = append(hits, f.Key)
				}
			}
			switch len(hits) {
			case 0:
				return nil, &InputError{Key: clean(k, 60), Msg: "this server has no such input (it has: " + fieldKeys(fields) + ")"}
			case 1:
				key = hits[0]
			default:
				return nil, &InputError{Key: clean(k, 60), Msg: "names several inputs: give one of " + strings.Join(hits, ", ")}
			}
		}
		if _, dup := out[key]; dup {
			return nil, &InputError{Key: key, Msg: "is given twice"}
		}
		out[key] = given[k]
	}
	return out, nil
}

func fieldKeys(fields []Field) string {
	var ks []string
	for _, f := range fields {
		if f.Omitted == "" {
			ks = append(ks, f.Key)
		}
	}
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

// translator makes one plan.
type translator struct {
	s      Server
	req    Request
	values map[string][]string // nil in the first pass
	plan   *Plan
	keys   map[string]bool
	// left are the optional inputs left out, for the notes.
	left []string
}

func newTranslator(s Server, req Request, values map[string][]string) *translator {
	return &translator{s: s, req: req, values: values, plan: &Plan{Server: req.Server}, keys: map[string]bool{}}
}

func (t *translator) run(o Option) error {
	var err error
	if o.Kind == KindRemote {
		err = t.remote(t.s.Remotes[o.Index-1-len(t.s.Packages)])
	} else {
		err = t.pkg(t.s.Packages[o.Index-1])
	}
	if err != nil {
		return err
	}
	if len(t.left) > 0 {
		t.note("optional inputs left out: " + strings.Join(t.left, ", "))
	}
	return nil
}

func (t *translator) note(s string) { t.plan.Notes = append(t.plan.Notes, s) }

// field records an input and returns its key (made unique).
func (t *translator) field(f Field) Field {
	base := f.Key
	for n := 2; t.keys[f.Key]; n++ {
		f.Key = base + "#" + strconv.Itoa(n)
	}
	t.keys[f.Key] = true
	t.plan.Fields = append(t.plan.Fields, f)
	return f
}

// setField updates the recorded field of key.
func (t *translator) setField(f Field) {
	for i := range t.plan.Fields {
		if t.plan.Fields[i].Key == f.Key {
			t.plan.Fields[i] = f
		}
	}
}

func fieldOf(key, label string, in Input) Field {
	return Field{Key: key, Label: clean(label, 80), Description: clean(in.Description, 500), Required: in.IsRequired,
		Secret: in.IsSecret, Format: clean(in.Format, 20), Default: clean(in.Default, 500), Placeholder: clean(in.Placeholder, 200),
		Choices: cleanAll(in.Choices)}
}

func cleanAll(ss []string) []string {
	if len(ss) > maxChoices {
		ss = ss[:maxChoices]
	}
	var out []string
	for _, s := range ss {
		out = append(out, clean(s, 200))
	}
	return out
}

// given is the value(s) of an input: the person's, or the default of a
// required one; ok is false when there is none.
func (t *translator) given(f Field, in Input) ([]string, bool, error) {
	vs, ok := t.values[f.Key]
	if !ok {
		if in.IsRequired && in.Default != "" {
			return []string{in.Default}, true, nil
		}
		return nil, false, nil
	}
	if len(vs) > 1 && !f.Repeated {
		return nil, false, &InputError{Key: f.Key, Msg: "takes one value"}
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		v, err := t.check(f, in, v)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
	}
	return out, len(out) > 0, nil
}

// check holds a given value to its input's format and choices.
func (t *translator) check(f Field, in Input, v string) (string, error) {
	if strings.ContainsAny(v, "\x00\r\n") {
		return "", &InputError{Key: f.Key, Msg: "a value is one line of text"}
	}
	if len(v) > 4096 {
		return "", &InputError{Key: f.Key, Msg: "is longer than 4096 bytes"}
	}
	if len(in.Choices) > 0 && !slices.Contains(in.Choices, v) {
		return "", &InputError{Key: f.Key, Msg: "must be one of " + strings.Join(cleanAll(in.Choices), ", ")}
	}
	switch in.Format {
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "", &InputError{Key: f.Key, Msg: "must be a number"}
		}
	case "boolean":
		if v != "true" && v != "false" {
			return "", &InputError{Key: f.Key, Msg: "must be true or false"}
		}
	case "filepath":
		if rest, ok := strings.CutPrefix(v, "~/"); ok && t.req.Home != "" {
			v = filepath.Join(t.req.Home, rest)
		} else if v == "~" && t.req.Home != "" {
			v = t.req.Home
		}
		if !filepath.IsAbs(v) {
			return "", &InputError{Key: f.Key, Msg: "must be a whole path (such as /home/you/notes or ~/notes): the server does not run in your current folder"}
		}
	}
	return v, nil
}

// missing records a required input without a value.
func (t *translator) missing(key string) {
	if !slices.Contains(t.plan.Missing, key) {
		t.plan.Missing = append(t.plan.Missing, key)
	}
}

// varPattern is a {name} of a value template.
var varPattern = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// secretRef is what a template gets in place of a secret variable: the
// managed variable's ${NAME}, or an error where no secret may go.
type secretRef func(name string, v Field) (string, error)

// render fills a fixed value's {name} variables: the person's values, or
// the defaults. A secret variable is left to ref; a name not among vars
// stays as written. lit escapes literal text for where it goes ($ → $$
// in a URL or header, whose $VAR the daemon expands).
func (t *translator) render(tmpl string, vars map[string]Input, ref secretRef, lit func(string) string) (string, error) {
	if len(vars) > maxVariables {
		return "", fmt.Errorf("a value of server %s has %d variables, more than %d", t.s.Name, len(vars), maxVariables)
	}
	var b strings.Builder
	last := 0
	for _, m := range varPattern.FindAllStringSubmatchIndex(tmpl, -1) {
		name := tmpl[m[2]:m[3]]
		in, ok := vars[name]
		if !ok {
			continue
		}
		b.WriteString(lit(tmpl[last:m[0]]))
		last = m[1]
		f := t.varField(name, in)
		if in.IsSecret && in.Value == "" {
			s, err := ref(name, f)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			continue
		}
		if in.Value != "" {
			b.WriteString(lit(in.Value))
			continue
		}
		vs, ok, err := t.given(f, in)
		if err != nil {
			return "", err
		}
		if !ok {
			t.missing(f.Key)
			continue
		}
		b.WriteString(lit(vs[0]))
	}
	b.WriteString(lit(tmpl[last:]))
	return b.String(), nil
}

// varField records (once) the field of a template's variable.
func (t *translator) varField(name string, in Input) Field {
	key := "var:" + name
	if t.keys[key] {
		for _, f := range t.plan.Fields {
			if f.Key == key {
				return f
			}
		}
	}
	f := fieldOf(key, name, in)
	f.Required = true // a fixed value needs all of its variables
	if in.IsSecret {
		f.Var = serverconf.VarFor(t.plan.Server, name)
	}
	if in.Value != "" {
		return f // fixed: not the person's to give
	}
	f = t.field(f)
	if !f.Secret {
		if vs, ok, _ := t.given(f, in); ok {
			f.Value = vs
			t.setField(f)
		}
	}
	return f
}

// noSecret refuses a secret where it would be written out.
func (t *translator) noSecret(where string) secretRef {
	return func(name string, f Field) (string, error) {
		return "", fmt.Errorf("server %s puts the secret %s in %s, where Plexus does not write secrets", t.s.Name, name, where)
	}
}

// placeholder puts a secret variable in as ${VAR}, which the daemon
// expands in a URL or header.
func placeholder(name string, f Field) (string, error) { return "${" + f.Var + "}", nil }

func plain(s string) string        { return s }
func escapeDollar(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// pkg translates a package: the command that runs it and its environment.
func (t *translator) pkg(p Package) error {
	kind := strings.ToLower(p.RegistryType)
	var argv []string
	runtime := ""
	switch kind {
	case kindNPM:
		runtime = "npx"
		argv = []string{"npx", "-y"}
		if !defaultIndex(kind, p.RegistryBaseURL) {
			argv = append(argv, "--registry="+p.RegistryBaseURL)
		}
	case kindPyPI:
		runtime = "uvx"
		argv = []string{"uvx"}
	case kindNuGet:
		runtime = "dnx"
		argv = []string{"dnx"}
	}
	if h := strings.ToLower(p.RuntimeHint); h != "" && h != runtime {
		t.note(fmt.Sprintf("runs with %s (the registry's hint: %s)", runtime, clean(p.RuntimeHint, 30)))
	}
	rt, err := t.args(p.RuntimeArguments, "runtime argument")
	if err != nil {
		return err
	}
	pa, err := t.args(p.PackageArguments, "argument")
	if err != nil {
		return err
	}
	version := p.Version
	switch {
	case version == "":
		t.note("the package's version is not given: " + runtime + " runs the newest one each time it starts")
	case strings.EqualFold(version, "latest"):
		t.note("the package's version is \"latest\", not pinned: " + runtime + " runs the newest one each time it starts")
	}
	switch kind {
	case kindNPM:
		spec := p.Identifier
		if version != "" {
			spec += "@" + version
		}
		argv = append(append(append(argv, rt...), spec), pa...)
	case kindPyPI:
		spec := p.Identifier
		if version != "" && !strings.EqualFold(version, "latest") {
			spec += "==" + version
		}
		argv = append(append(append(argv, rt...), spec), pa...)
	case kindNuGet:
		spec := p.Identifier
		if version != "" && !strings.EqualFold(version, "latest") {
			spec += "@" + version
		}
		argv = append(append(argv, spec, "--yes"), rt...)
		if len(pa) > 0 {
			argv = append(append(argv, "--"), pa...)
		}
	}
	c := &t.plan.Config
	c.Type = config.TypeStdio
	c.Command, c.Args = argv[0], argv[1:]
	for _, kv := range p.EnvironmentVariables {
		if err := t.env(kv); err != nil {
			return err
		}
	}
	return nil
}

// env translates an environment variable: a plain value, or a managed
// secret by name.
func (t *translator) env(kv KeyValue) error {
	c := &t.plan.Config
	set := func(r config.Ref) {
		if c.Env == nil {
			c.Env = map[string]config.Ref{}
		}
		c.Env[kv.Name] = r
	}
	if kv.Value != "" {
		secretVars := false
		for _, m := range varPattern.FindAllStringSubmatch(kv.Value, -1) {
			if in, ok := kv.Variables[m[1]]; ok && in.IsSecret && in.Value == "" {
				secretVars = true
			}
		}
		if !secretVars {
			v, err := t.render(kv.Value, kv.Variables, t.noSecret("an environment variable"), plain)
			if err != nil {
				return err
			}
			set(config.PlainValue(v))
			return nil
		}
		// A value holding a secret is kept whole as the secret: the
		// person gives it as the template says.
		f := fieldOf("env:"+kv.Name, kv.Name, kv.Input)
		f.Secret, f.Required = true, true
		f.Description = strings.TrimSpace(f.Description + " (the whole value, as " + clean(kv.Value, 200) + ")")
		f.Var = serverconf.VarFor(t.plan.Server, kv.Name)
		t.field(f)
		set(config.Ref{Env: f.Var})
		return nil
	}
	f := fieldOf("env:"+kv.Name, kv.Name, kv.Input)
	if f.Secret {
		f.Var = serverconf.VarFor(t.plan.Server, kv.Name)
		f = t.field(f)
		if f.Required || t.req.Secrets[f.Key] {
			set(config.Ref{Env: f.Var})
		} else {
			t.left = append(t.left, kv.Name)
		}
		return nil
	}
	return t.plainInput(f, kv.Input, func(vs []string) { set(config.PlainValue(vs[0])) })
}

// plainInput records a value that is not secret and applies it: given,
// or the default of a required one; a required one without a value is
// missing, an optional one left out.
func (t *translator) plainInput(f Field, in Input, apply func(vs []string)) error {
	f = t.field(f)
	vs, ok, err := t.given(f, in)
	if err != nil {
		return err
	}
	switch {
	case ok:
		f.Value = vs
		t.setField(f)
		apply(vs)
	case f.Required:
		t.missing(f.Key)
	default:
		t.left = append(t.left, f.Label)
	}
	return nil
}

// args translates a package's or runtime's arguments. A secret is never
// put on a command line, where every process of the machine can read it:
// an optional one is left out (with the reason), a required one refuses
// the option.
func (t *translator) args(as []Argument, what string) ([]string, error) {
	var argv []string
	for i, a := range as {
		switch a.Type {
		case "positional", "named":
		default:
			return nil, fmt.Errorf("server %s has an %s of unknown type %q", t.s.Name, what, clean(a.Type, 20))
		}
		named := a.Type == "named"
		if named && (a.Name == "" || strings.ContainsAny(a.Name, "\x00\r\n")) {
			return nil, fmt.Errorf("server %s has a named %s without a name", t.s.Name, what)
		}
		label, key := a.ValueHint, "arg:"+a.ValueHint
		switch {
		case named:
			label, key = a.Name, "arg:"+a.Name
		case a.ValueHint == "":
			label, key = "#"+strconv.Itoa(i+1), "arg:#"+strconv.Itoa(i+1)
		}
		emit := func(v string) {
			switch {
			case !named:
				argv = append(argv, v)
			case a.Format == "boolean" && v == "true":
				argv = append(argv, a.Name)
			case a.Format == "boolean" && v == "false":
			default:
				argv = append(argv, a.Name, v)
			}
		}
		if a.Value != "" {
			v, err := t.render(a.Value, a.Variables, t.noSecret("a command line (every process on this machine can read it there)"), plain)
			if err != nil {
				return nil, err
			}
			emit(v)
			continue
		}
		f := fieldOf(key, label, a.Input)
		f.Repeated = a.IsRepeated
		if f.Secret {
			if f.Required {
				return nil, fmt.Errorf("server %s needs the secret %s %s on its command line, where every process on this machine can read it: Plexus does not put secrets there; run it by hand if you accept that", t.s.Name, what, clean(label, 60))
			}
			f.Omitted = "a secret on a command line, where every process on this machine can read it"
			t.field(f)
			t.note(fmt.Sprintf("left out the secret %s %s: Plexus does not put secrets on a command line", what, clean(label, 60)))
			continue
		}
		f = t.field(f)
		vs, ok, err := t.given(f, a.Input)
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			f.Value = vs
			t.setField(f)
			for _, v := range vs {
				emit(v)
			}
		case f.Required && !(named && a.Format == "boolean"):
			t.missing(f.Key)
		default:
			t.left = append(t.left, label)
		}
	}
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return nil, errors.New("an argument holds a NUL byte")
		}
	}
	return argv, nil
}

// remote translates a remote: its URL and headers, secrets as managed
// variables the daemon puts in at each connection.
func (t *translator) remote(r Transport) error {
	c := &t.plan.Config
	c.Type = config.TypeHTTP
	if r.Type == "sse" {
		c.Type = config.TypeSSE
	}
	u, err := t.render(r.URL, r.Variables, placeholder, escapeDollar)
	if err != nil {
		return err
	}
	c.URL = u
	for _, h := range r.Headers {
		if err := t.header(h); err != nil {
			return err
		}
	}
	return nil
}

// bearerTemplate is an Authorization value that is a bearer token alone.
var bearerTemplate = regexp.MustCompile(`^Bearer \{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// header translates one header of a remote.
func (t *translator) header(h KeyValue) error {
	c := &t.plan.Config
	set := func(v config.Value) {
		if c.Headers == nil {
			c.Headers = map[string]config.Value{}
		}
		c.Headers[h.Name] = v
	}
	auth := strings.EqualFold(h.Name, "Authorization")
	if h.Value != "" {
		// Authorization: Bearer {token} is a bearer token: the daemon's
		// bearerTokenEnvVar, as `plexus add --bearer-env` and the forms
		// write it.
		if m := bearerTemplate.FindStringSubmatch(h.Value); auth && m != nil {
			if in, ok := h.Variables[m[1]]; ok && in.IsSecret && in.Value == "" {
				f := fieldOf("var:"+m[1], m[1], in)
				f.Required, f.Var = true, serverconf.VarFor(t.plan.Server, "token")
				f.Description = strings.TrimSpace(f.Description + " (sent as Authorization: Bearer …)")
				t.field(f)
				c.BearerTokenEnvVar = f.Var
				return nil
			}
		}
		v, err := t.render(h.Value, h.Variables, placeholder, escapeDollar)
		if err != nil {
			return err
		}
		set(config.Value{Text: v})
		return nil
	}
	f := fieldOf("header:"+h.Name, h.Name, h.Input)
	if f.Secret {
		if auth {
			// A token alone is sent as a bearer token; the description
			// says so, and `plexus edit` sends another scheme.
			f.Var = serverconf.VarFor(t.plan.Server, "token")
			f.Description = strings.TrimSpace(f.Description + " (sent as Authorization: Bearer …)")
		} else {
			f.Var = serverconf.VarFor(t.plan.Server, h.Name)
		}
		f = t.field(f)
		switch {
		case !f.Required && !t.req.Secrets[f.Key]:
			t.left = append(t.left, h.Name)
		case auth:
			c.BearerTokenEnvVar = f.Var
		default:
			set(config.Value{Env: f.Var})
		}
		return nil
	}
	return t.plainInput(f, h.Input, func(vs []string) { set(config.Value{Text: escapeDollar(vs[0])}) })
}
