package importer

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/cmdline"
	"github.com/plexus-mcp/plexus/internal/config"
)

// rawServer is one server entry as a dialect read it, in the terms shared by
// every client; build turns it into a Plexus server. Values are as written
// in the file, placeholders included.
type rawServer struct {
	typ     string // "", or the type as written (stdio, http, streamable-http, sse, ...)
	command string
	args    []string
	cwd     string
	env     []kv
	// passEnv names variables the client passed on from its own
	// environment (Codex env_vars, goose env_keys).
	passEnv []string

	url        string
	headers    []kv
	envHeaders []kv   // header → variable name (Codex env_http_headers)
	bearerEnv  string // variable holding a bearer token
	bearer     string // a bearer token written in the file

	enabled       *bool
	enabledTools  []string
	disabledTools []string
	startupMs     int
	callMs        int
	maxRestarts   *int

	oauthClientID string
	oauthSecret   string
	oauthAuthURL  string
	oauthTokenURL string
	oauthScopes   []string

	image string // a Docker image, for clients that start one themselves

	notes []string
	// bad are type problems: the entry is skipped with the first.
	bad []string
	// skip is the dialect's reason to skip the entry.
	skip string
}

func (r *rawServer) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// seconds converts a timeout in seconds, as most clients write it, to
// milliseconds; a value out of range is reported and dropped.
func (r *rawServer) seconds(field string, sec float64, ok bool) int {
	if !ok {
		return 0
	}
	if !(sec > 0) || sec > 365*24*3600 {
		r.note("skipped field %s: not a usable number of seconds", field)
		return 0
	}
	return max(1, int(math.Round(sec*1000)))
}

// conv converts the entries of one file.
type conv struct {
	dialect string
	// dir is the folder of the imported file, absolute, or "" when not
	// known: relative working directories resolve against it.
	dir    string
	syntax syntax
	inputs map[string]*node
	// reserved are the variables the file refers to: a secret made from a
	// literal value never takes one of their names.
	reserved map[string]bool
	// refs collects the variables referred to, for the next pass.
	refs map[string]bool
	// inputNames maps VS Code input ids to variable names.
	inputNames map[string]string
	// secrets and needed are the names committed by earlier entries.
	secrets map[string]string
	needed  map[string]bool
}

// convert builds every entry. It runs twice: the first pass learns which
// variables the file refers to, so that the second never names a moved
// secret like one of them.
func convert(dialectName, dir string, syn syntax, f *found) *Result {
	slices.SortStableFunc(f.entries, func(a, b rawEntry) int { return strings.Compare(a.source, b.source) })
	names := assignNames(f.entries)
	first := newConv(dialectName, syn, f, nil)
	first.dir = dir
	first.buildAll(f, names)
	reserved := first.refs
	for k := range f.env {
		reserved[k] = true
	}
	c := newConv(dialectName, syn, f, reserved)
	c.dir = dir
	res := c.buildAll(f, names)
	res.Notes = append(res.Notes, f.notes...)
	return res
}

func newConv(dialectName string, syn syntax, f *found, reserved map[string]bool) *conv {
	if reserved == nil {
		reserved = map[string]bool{}
	}
	c := &conv{
		dialect: dialectName, syntax: syn, inputs: f.inputs, reserved: reserved,
		refs: map[string]bool{}, inputNames: map[string]string{},
		secrets: map[string]string{}, needed: map[string]bool{},
	}
	// Input ids are named first, in sorted order, so that two ids that
	// sanitize alike get the same suffixes every time.
	for _, id := range slices.Sorted(maps.Keys(f.inputs)) {
		c.inputName(id)
	}
	return c
}

func (c *conv) buildAll(f *found, names map[int]nameChoice) *Result {
	res := &Result{Dialect: c.dialect, Servers: map[string]config.Server{}, Secrets: map[string]string{}}
	for i, e := range f.entries {
		entry := Entry{Source: e.source, Original: e.original}
		nc, named := names[i]
		switch {
		case e.skip != "":
			entry.Action, entry.Reason = Skipped, e.skip
		case !named:
			entry.Action, entry.Reason = Skipped, nc.reason
		default:
			b := c.builder(nc.name)
			sc, ok := b.build(e.raw)
			if !ok {
				// Nothing of it is kept, so notes on how its fields
				// would have been carried over would mislead.
				entry.Action, entry.Reason = Skipped, b.skip
				break
			}
			entry.Notes = b.notes
			entry.Name = nc.name
			entry.Action = Imported
			if nc.reason != "" {
				entry.Action, entry.Reason = Renamed, nc.reason
			}
			for k, v := range b.secrets {
				c.secrets[k], res.Secrets[k] = v, v
			}
			for _, k := range b.needed {
				c.needed[k] = true
			}
			// Variables the file itself defines (Moltis's [env]).
			for _, v := range sc.VarNames() {
				if val, ok := f.env[v]; ok {
					res.Secrets[v] = val
					b.secretNames = append(b.secretNames, v)
					entry.Notes = append(entry.Notes, fmt.Sprintf("%s: value taken from the file's [env] table into a managed secret", v))
				}
			}
			entry.Secrets = sortedUnique(b.secretNames)
			res.Servers[nc.name] = sc
		}
		res.Entries = append(res.Entries, entry)
	}
	slices.SortStableFunc(res.Entries, func(a, b Entry) int { return strings.Compare(a.Source, b.Source) })
	if len(f.env) > 0 {
		var unused []string
		for _, k := range slices.Sorted(maps.Keys(f.env)) {
			if _, ok := res.Secrets[k]; !ok {
				unused = append(unused, k)
			}
		}
		if len(unused) > 0 {
			res.Notes = append(res.Notes, "not imported from [env], since no imported server refers to them: "+strings.Join(unused, ", "))
		}
	}
	return res
}

// missing fills in the variables that are neither moved nor set.
func (res *Result) missing(env func(string) (string, bool)) {
	all := map[string]bool{}
	for i := range res.Entries {
		e := &res.Entries[i]
		if e.Name == "" {
			continue
		}
		for _, v := range res.Servers[e.Name].VarNames() {
			if _, ok := res.Secrets[v]; ok {
				continue
			}
			if env != nil {
				if _, ok := env(v); ok {
					continue
				}
			}
			e.Missing = append(e.Missing, v)
			all[v] = true
		}
	}
	res.Missing = slices.Sorted(maps.Keys(all))
}

// inputName is the managed variable that stands for a VS Code input.
func (c *conv) inputName(id string) string {
	if n, ok := c.inputNames[id]; ok {
		return n
	}
	base := sanitizeVar(id)
	taken := map[string]bool{}
	for _, n := range c.inputNames {
		taken[n] = true
	}
	name := base
	for i := 2; taken[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	c.inputNames[id] = name
	return name
}

// builder builds one server.
type builder struct {
	c      *conv
	name   string // the Plexus name
	notes  []string
	skip   string
	failed bool
	// secrets are the values moved out of this entry, by variable name.
	secrets     map[string]string
	secretNames []string
	// needed are variables named by this entry that nobody has a value for.
	needed []string
	// userinfo is the Authorization value made from the URL's user name
	// and password, until the headers are known.
	userinfo string
}

func (c *conv) builder(name string) *builder {
	return &builder{c: c, name: name, secrets: map[string]string{}}
}

func (b *builder) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// fail skips the entry; the first reason wins.
func (b *builder) fail(format string, args ...any) {
	if !b.failed {
		b.failed = true
		b.skip = fmt.Sprintf(format, args...)
	}
}

func (b *builder) build(r rawServer) (config.Server, bool) {
	b.notes = append(b.notes, r.notes...)
	if r.skip != "" {
		b.fail("%s", r.skip)
		return config.Server{}, false
	}
	if len(r.bad) > 0 {
		b.fail("%s", r.bad[0])
		return config.Server{}, false
	}
	var s config.Server
	switch typ := b.serverType(r); typ {
	case "":
		return s, false
	case config.TypeStdio:
		s = b.stdio(r)
	default:
		s = b.remote(r, typ)
	}
	if b.failed {
		return config.Server{}, false
	}
	if r.enabled != nil && !*r.enabled {
		s.Enabled = r.enabled // on is the default: only off is written
	}
	b.tools(&s, r)
	s.StartupTimeoutMs = r.startupMs
	s.CallTimeoutMs = r.callMs
	s.MaxRestartAttempts = r.maxRestarts
	if err := config.Validate(&config.File{MCP: config.MCP{Servers: map[string]config.Server{b.name: s}}}); err != nil {
		// Whatever slipped through cannot be represented: say what, by
		// key path (the messages quote no values).
		msg := err.Error()
		msg = strings.ReplaceAll(msg, "mcp.servers."+b.name+".", "")
		msg = strings.ReplaceAll(msg, "\n", "; ")
		b.fail("Plexus cannot represent it: %s", msg)
		return config.Server{}, false
	}
	return s, true
}

// serverType decides the Plexus type, or skips the entry.
func (b *builder) serverType(r rawServer) string {
	typ := strings.ToLower(strings.TrimSpace(r.typ))
	switch typ {
	case "":
	case "stdio", "local", "command":
		typ = config.TypeStdio
	case "http", "streamable-http", "streamable_http", "streamablehttp", "remote":
		typ = config.TypeHTTP
	case "sse":
		typ = config.TypeSSE
	case "ws", "websocket", "websockets":
		b.fail("a WebSocket server: Plexus reaches servers over stdio, streamable HTTP and SSE only")
		return ""
	default:
		b.fail("type %q is not one Plexus knows (stdio, http or sse)", shorten(r.typ))
		return ""
	}
	switch {
	case typ == "" && r.command != "":
		typ = config.TypeStdio
	case typ == "" && r.url != "":
		typ = config.TypeHTTP
		if strings.HasSuffix(strings.TrimRight(strings.SplitN(r.url, "?", 2)[0], "/"), "/sse") {
			typ = config.TypeSSE
			b.note("type: sse, guessed from the URL, which ends in /sse (the file does not say)")
		}
	case typ == "" && r.image != "":
		b.fail("runs the Docker image %s, which Plexus does not start by itself: add it as a command, e.g. plexus add NAME -- docker run -i --rm IMAGE", shorten(r.image))
		return ""
	case typ == "":
		b.fail("neither a command nor a URL")
		return ""
	}
	switch {
	case typ == config.TypeStdio && r.command == "":
		b.fail("a stdio server without a command")
		return ""
	case typ != config.TypeStdio && r.url == "":
		b.fail("an %s server without a URL", typ)
		return ""
	}
	if typ == config.TypeStdio && r.url != "" {
		b.note("skipped field url: the server runs as a command")
	}
	if typ != config.TypeStdio && r.command != "" {
		b.note("skipped field command: the server is reached by its URL")
	}
	if typ != config.TypeStdio && (len(r.env) > 0 || len(r.passEnv) > 0 || r.cwd != "") {
		b.note("skipped fields env and cwd: a server reached by its URL runs elsewhere, with no environment from Plexus")
	}
	return typ
}

func (b *builder) stdio(r rawServer) config.Server {
	s := config.Server{Type: config.TypeStdio}
	command, args := r.command, r.args
	if b.hasRef(command) {
		b.fail("command uses a placeholder, which Plexus does not expand in commands: write the path out")
		return s
	}
	if len(args) == 0 && strings.ContainsAny(strings.TrimSpace(command), " \t\n") {
		words, err := cmdline.Split(command)
		if err != nil {
			b.fail("command holds a command line that cannot be split: %v", err)
			return s
		}
		command, args = words[0], words[1:]
		b.note("command: split the command line into the command and %s", plural(len(args), "argument"))
	}
	s.Command, s.Args = command, args
	for i, a := range args {
		if b.hasRef(a) {
			b.fail("args[%d] uses a placeholder, which Plexus does not expand in arguments: write the value out, or pass it in env if the server reads it there", i)
			return s
		}
		if why := secretArg(args, i); why != "" {
			b.fail("args[%d] looks like a secret (%s): Plexus keeps secrets out of its settings and cannot pass one as an argument; add the server by hand with the secret in env, if it reads one", i, why)
			return s
		}
	}
	if r.cwd != "" {
		if b.hasRef(r.cwd) {
			b.fail("cwd uses a placeholder, which Plexus does not expand: write the directory out")
			return s
		}
		s.Cwd = b.cwd(r.cwd)
	}
	for _, e := range r.env {
		field := config.KeyPath("env", e.key)
		if !config.ValidVarName(e.key) {
			b.note("skipped %s: not a valid variable name", field)
			continue
		}
		if s.Env == nil {
			s.Env = map[string]config.Ref{}
		}
		s.Env[e.key] = b.envEntry(field, e.key, e.val)
	}
	for _, v := range r.passEnv {
		if !config.ValidVarName(v) {
			b.note("skipped variable %s: not a valid variable name", shorten(v))
			continue
		}
		if _, ok := s.Env[v]; ok {
			continue
		}
		if s.Env == nil {
			s.Env = map[string]config.Ref{}
		}
		s.Env[v] = config.Ref{Env: v}
		b.ref(v)
		b.note("env.%s: passed on from the environment as {\"env\": %q}: Plexus resolves it from its managed secrets, then its own environment", v, v)
	}
	return s
}

func (b *builder) remote(r rawServer, typ string) config.Server {
	s := config.Server{Type: typ}
	s.URL = b.url(r)
	if b.failed {
		return s
	}
	if r.bearerEnv != "" {
		if config.ValidVarName(r.bearerEnv) {
			s.BearerTokenEnvVar = r.bearerEnv
			b.ref(r.bearerEnv)
		} else {
			b.note("skipped the bearer token variable: not a valid variable name")
		}
	}
	if r.bearer != "" && s.BearerTokenEnvVar == "" {
		s.BearerTokenEnvVar = b.whole("bearer token", "BEARER_TOKEN", r.bearer)
	}
	addHeader := func(name string, v config.Value) {
		if s.Headers == nil {
			s.Headers = map[string]config.Value{}
		}
		s.Headers[name] = v
	}
	hasAuth := func() bool {
		if s.BearerTokenEnvVar != "" {
			return true
		}
		for k := range s.Headers {
			if strings.EqualFold(k, "Authorization") {
				return true
			}
		}
		return false
	}
	for _, h := range r.headers {
		field := config.KeyPath("headers", h.key)
		if strings.EqualFold(h.key, "Authorization") && hasAuth() {
			b.note("skipped %s: the server already sends an Authorization", field)
			continue
		}
		if strings.EqualFold(h.key, "Authorization") {
			if v, ok := b.bearerHeader(field, h.val); ok {
				s.BearerTokenEnvVar = v
				continue
			}
		}
		addHeader(h.key, b.header(field, h.key, h.val))
	}
	for _, h := range r.envHeaders {
		field := config.KeyPath("env_http_headers", h.key)
		if !config.ValidVarName(h.val) {
			b.note("skipped %s: not a valid variable name", field)
			continue
		}
		if strings.EqualFold(h.key, "Authorization") && hasAuth() {
			b.note("skipped %s: the server already sends an Authorization", field)
			continue
		}
		b.ref(h.val)
		addHeader(h.key, config.Value{Env: h.val})
	}
	if b.userinfo != "" {
		if hasAuth() {
			b.note("url: dropped the user name and password, since the server already sends an Authorization")
		} else {
			addHeader("Authorization", config.Value{Env: b.secret("url", "AUTHORIZATION", b.userinfo)})
			b.note("url: the user name and password became an Authorization: Basic header, as HTTP clients send them")
		}
		b.userinfo = ""
	}
	if r.oauthClientID != "" || r.oauthSecret != "" || r.oauthAuthURL != "" || r.oauthTokenURL != "" || len(r.oauthScopes) > 0 {
		o := &config.OAuth{AuthURL: r.oauthAuthURL, TokenURL: r.oauthTokenURL, Scopes: r.oauthScopes}
		if b.hasRef(r.oauthClientID) {
			b.note("skipped the OAuth client id: it uses a placeholder, which Plexus does not expand there")
		} else {
			o.ClientID = r.oauthClientID
		}
		if r.oauthSecret != "" {
			o.ClientSecret = &config.Ref{Env: b.whole("oauth client secret", "OAUTH_CLIENT_SECRET", r.oauthSecret)}
		}
		s.OAuth = o
	}
	return s
}

func (b *builder) tools(s *config.Server, r rawServer) {
	s.EnabledTools = r.enabledTools
	s.DisabledTools = r.disabledTools
	if len(s.EnabledTools) > 0 && len(s.DisabledTools) > 0 {
		var keep []string
		for _, t := range s.EnabledTools {
			if !slices.Contains(s.DisabledTools, t) {
				keep = append(keep, t)
			}
		}
		s.EnabledTools, s.DisabledTools = keep, nil
		b.note("enabledTools: the enabled tools less the disabled ones (Plexus takes one list or the other)")
		if len(keep) == 0 {
			b.fail("every enabled tool is also disabled: the server would offer nothing")
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
