package importer

import (
	"fmt"
	"math"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Reasons for fields that Plexus knows but cannot carry over.
const (
	whyEnvFile    = "Plexus does not read env files: store each variable with `plexus secret set VAR` and refer to it in env"
	whyApproval   = "Plexus has no per-tool approval settings"
	whyOAuthExtra = "Plexus finds OAuth settings by discovery; set a client id with `plexus edit` if the server needs one"
)

// mcpServersReasons covers the fields of the mcpServers family (Claude,
// Cursor, VS Code and the clients that copied their format).
var mcpServersReasons = map[string]string{
	"envFile":        whyEnvFile,
	"headersHelper":  "Plexus does not run a command to make headers: store the header's value with `plexus secret set VAR`",
	"autoApprove":    whyApproval,
	"alwaysAllow":    whyApproval,
	"timeout":        "Plexus's call timeout is callTimeoutMs: set it with `plexus edit NAME --call-timeout MS`",
	"oauth":          whyOAuthExtra,
	"auth":           whyOAuthExtra,
	"dev":            "VS Code's development mode (watch and debug) has no equivalent in Plexus",
	"sandbox":        "VS Code's sandbox has no equivalent in Plexus",
	"sandboxEnabled": "VS Code's sandbox has no equivalent in Plexus",
}

// cosmetic fields only label a server for display.
var cosmetic = []string{"name", "displayName", "display_name", "description", "gallery", "version", "bundled", "title"}

// mcpEntry reads one entry of mcpServers (Claude, Cursor) or servers (VS Code).
func mcpEntry(o *obj) rawServer {
	var r rawServer
	r.typ = o.str("type")
	for _, alt := range []string{"transport", "transportType"} {
		if t := o.str(alt); r.typ == "" {
			r.typ = t
		}
	}
	r.command = o.str("command")
	r.args, _ = o.strs("args")
	r.env = o.strMap("env")
	r.cwd = o.str("cwd")
	r.url = o.str("url")
	if u := o.str("serverUrl"); r.url == "" {
		r.url = u // Windsurf's spelling
	}
	r.headers = o.strMap("headers")
	if d := o.boolean("disabled"); d != nil {
		on := !*d
		r.enabled = &on
	}
	if e := o.boolean("enabled"); e != nil {
		r.enabled = e
	}
	r.image = o.str("image")
	o.skipFields(&r, mcpServersReasons, cosmetic...)
	r.bad = o.bad
	return r
}

// entries reads the members of an object of servers at path.
func entries(servers *node, path string, read func(*obj) rawServer) []rawEntry {
	if servers == nil {
		return nil
	}
	var out []rawEntry
	for _, m := range servers.members {
		e := rawEntry{source: config.KeyPath(path, m.key), original: m.key, line: m.line}
		switch {
		case m.dup:
			e.skip, e.noName = fmt.Sprintf("repeats the name %q; the first entry of that name is the one imported", shorten(m.key)), true
		case m.val.kind != objectKind:
			e.skip, e.noName = locate(e.source, m.line)+": want an object, not "+article(m.val.kind.String()), true
		default:
			e.raw = read(newObj(m.val, e.source))
		}
		out = append(out, e)
	}
	return out
}

// objectAt returns the object at key of n, nil if absent, or an *Error.
func objectAt(n *node, path, key string) (*node, error) {
	if n == nil {
		return nil, nil
	}
	for _, m := range n.members {
		if m.key != key || m.dup {
			continue
		}
		if m.val.kind == nullKind {
			return nil, nil
		}
		if m.val.kind != objectKind {
			return nil, &Error{Path: config.KeyPath(path, key), Line: m.line, Msg: "want an object, not " + article(m.val.kind.String())}
		}
		return m.val, nil
	}
	return nil, nil
}

func rootObject(root *node, what string) error {
	if root.kind != objectKind {
		return &Error{Line: root.line, Msg: "the file must hold " + what + ", not " + article(root.kind.String())}
	}
	return nil
}

// elsewhere names the dialect a file seems to be in, for an error that
// finds no servers where the chosen dialect keeps them.
func elsewhere(root *node) string {
	switch {
	case root.get("context_servers") != nil:
		return ": this looks like Zed's settings (--dialect zed)"
	case root.get("servers") != nil:
		return ": this looks like VS Code's mcp.json (--dialect vscode)"
	case root.get("mcpServers") != nil:
		return ": this looks like an mcpServers file (--dialect claude or cursor)"
	case root.get("mcp_servers") != nil:
		return ": this looks like Codex's config.toml (--dialect codex)"
	case root.get("extensions") != nil:
		return ": this looks like goose's config.yaml (--dialect goose)"
	case root.get("mcp") != nil:
		return ": this looks like opencode's opencode.json (--dialect opencode)"
	}
	return ""
}

// ---- Claude Code, Claude Desktop, Cursor ----

func claudeServers(projects bool) func(*node) (*found, error) {
	return func(root *node) (*found, error) {
		if err := rootObject(root, "a JSON object"); err != nil {
			return nil, err
		}
		servers, err := objectAt(root, "", "mcpServers")
		if err != nil {
			return nil, err
		}
		f := &found{entries: entries(servers, "mcpServers", mcpEntry)}
		if projects {
			n, err := projectServers(root, f)
			if err != nil {
				return nil, err
			}
			if servers == nil && n == 0 && root.get("projects") == nil {
				return nil, &Error{Msg: "no mcpServers object" + elsewhere(root)}
			}
			return f, nil
		}
		if servers == nil {
			return nil, &Error{Msg: "no mcpServers object" + elsewhere(root)}
		}
		return f, nil
	}
}

// projectServers reports the servers of Claude Code's projects
// (projects.<path>.mcpServers, the "local" scope) as skipped: they belong
// to one directory each, and Plexus servers serve every agent.
func projectServers(root *node, f *found) (int, error) {
	projects, err := objectAt(root, "", "projects")
	if err != nil || projects == nil {
		return 0, err
	}
	count := 0
	for _, p := range projects.members {
		if p.val.kind != objectKind || p.dup {
			continue
		}
		path := config.KeyPath("projects", p.key)
		servers, err := objectAt(p.val, path, "mcpServers")
		if err != nil {
			return 0, err
		}
		if servers == nil {
			continue
		}
		for _, m := range servers.members {
			f.entries = append(f.entries, rawEntry{
				source:   config.KeyPath(config.KeyPath(path, "mcpServers"), m.key),
				original: m.key,
				line:     m.line,
				noName:   true,
				skip: fmt.Sprintf("belongs to the project %s only (Claude Code's local scope), and Plexus servers serve every agent: add it with `plexus add` if all of them should have it",
					strconv.Quote(shorten(p.key))),
			})
			count++
		}
	}
	if count > 0 {
		f.notes = append(f.notes, fmt.Sprintf("imported the user's servers (mcpServers); %s of Claude Code projects (projects.*.mcpServers) skipped", plural(count, "server")))
	}
	return count, nil
}

func cursorServers(root *node) (*found, error) { return claudeServers(false)(root) }

// ---- VS Code ----

func vscodeServers(root *node) (*found, error) {
	if err := rootObject(root, "a JSON object"); err != nil {
		return nil, err
	}
	base, path := root, ""
	if root.get("servers") == nil && root.get("mcp") != nil {
		// The user settings.json of older VS Code versions: "mcp": {...}.
		mcp, err := objectAt(root, "", "mcp")
		if err != nil {
			return nil, err
		}
		base, path = mcp, "mcp"
	}
	servers, err := objectAt(base, path, "servers")
	if err != nil {
		return nil, err
	}
	if servers == nil {
		return nil, &Error{Msg: "no servers object" + elsewhere(root)}
	}
	f := &found{entries: entries(servers, config.KeyPath(path, "servers"), mcpEntry), inputs: map[string]*node{}}
	for _, m := range base.members {
		if m.key != "inputs" || m.val.kind == nullKind {
			continue
		}
		if m.val.kind != arrayKind {
			return nil, &Error{Path: config.KeyPath(path, "inputs"), Line: m.line, Msg: "want an array, not " + article(m.val.kind.String())}
		}
		for _, in := range m.val.elems {
			if id := in.get("id"); id != nil && id.kind == stringKind && id.text != "" {
				f.inputs[id.text] = in
			}
		}
	}
	return f, nil
}

// ---- Codex ----

var codexReasons = map[string]string{
	"required":                     "Plexus starts every server it can and keeps trying the others; none is required",
	"supports_parallel_tool_calls": "Plexus always lets calls run in parallel",
	"default_tools_approval_mode":  whyApproval,
	"tools":                        whyApproval,
	"oauth_resource":               whyOAuthExtra,
	"experimental_environment":     "Plexus runs every server on this machine",
}

func codexServers(root *node) (*found, error) {
	servers, err := objectAt(root, "", "mcp_servers")
	if err != nil {
		return nil, err
	}
	if servers == nil {
		return nil, &Error{Msg: "no [mcp_servers] table" + elsewhere(root)}
	}
	return &found{entries: entries(servers, "mcp_servers", codexEntry)}, nil
}

func codexEntry(o *obj) rawServer {
	var r rawServer
	r.command = o.str("command")
	r.args, _ = o.strs("args")
	r.env = o.strMap("env")
	if v, line := o.lookup("env_vars"); v != nil {
		if v.kind != arrayKind {
			o.wrong("env_vars", line, "an array", v)
		}
		for i, e := range v.elems {
			switch {
			case e.kind == stringKind:
				r.passEnv = append(r.passEnv, e.text)
			case e.get("name") != nil && e.get("name").kind == stringKind:
				r.passEnv = append(r.passEnv, e.get("name").text)
			default:
				o.bad = append(o.bad, locate(config.IndexPath(o.at("env_vars"), i), e.line)+": want a variable name")
			}
		}
	}
	r.cwd = o.str("cwd")
	r.url = o.str("url")
	if r.url != "" && r.command == "" {
		r.typ = "http" // Codex speaks streamable HTTP only
	}
	r.bearer = o.str("bearer_token")
	r.bearerEnv = o.str("bearer_token_env_var")
	r.headers = o.strMap("http_headers")
	r.envHeaders = o.strMap("env_http_headers")
	sec, ok := o.number("startup_timeout_sec")
	r.startupMs = r.seconds("startup_timeout_sec", sec, ok)
	if ms, ok := o.number("startup_timeout_ms"); ok && r.startupMs == 0 {
		r.startupMs = r.seconds("startup_timeout_ms", ms/1000, true)
	}
	sec, ok = o.number("tool_timeout_sec")
	r.callMs = r.seconds("tool_timeout_sec", sec, ok)
	r.enabled = o.boolean("enabled")
	r.enabledTools, _ = o.strs("enabled_tools")
	r.disabledTools, _ = o.strs("disabled_tools")
	r.oauthScopes, _ = o.strs("scopes")
	if oa := o.object("oauth"); oa != nil {
		r.oauthClientID = oa.str("client_id")
		for _, k := range oa.rest() {
			r.note("skipped field oauth.%s: %s", k, whyOAuthExtra)
		}
		o.bad = append(o.bad, oa.bad...)
	}
	o.skipFields(&r, codexReasons, cosmetic...)
	r.bad = o.bad
	return r
}

// ---- Zed ----

func zedServers(root *node) (*found, error) {
	if err := rootObject(root, "a JSON object"); err != nil {
		return nil, err
	}
	servers, err := objectAt(root, "", "context_servers")
	if err != nil {
		return nil, err
	}
	if servers == nil {
		return nil, &Error{Msg: "no context_servers object" + elsewhere(root)}
	}
	return &found{entries: entries(servers, "context_servers", zedEntry)}, nil
}

func zedEntry(o *obj) rawServer {
	var r rawServer
	source := o.str("source")
	r.enabled = o.boolean("enabled")
	if v, line := o.lookup("command"); v != nil {
		switch v.kind {
		case stringKind:
			r.command = v.text
		case objectKind:
			// The first form: "command": {"path", "args", "env"}.
			c := newObj(v, o.at("command"))
			r.command = c.str("path")
			if r.command == "" {
				r.command = c.str("command")
			}
			r.args, _ = c.strs("args")
			r.env = c.strMap("env")
			for _, k := range c.rest() {
				r.note("skipped field command.%s: Plexus has no such setting", k)
			}
			o.bad = append(o.bad, c.bad...)
		default:
			o.wrong("command", line, "a string or an object", v)
		}
	}
	if args, ok := o.strs("args"); ok {
		r.args = append(r.args, args...)
	}
	r.env = append(r.env, o.strMap("env")...)
	r.url = o.str("url")
	r.headers = o.strMap("headers")
	sec, ok := o.number("timeout")
	r.callMs = r.seconds("timeout", sec, ok)
	if oa := o.object("oauth"); oa != nil {
		r.oauthClientID = oa.str("client_id")
		r.oauthSecret = oa.str("client_secret")
		for _, k := range oa.rest() {
			r.note("skipped field oauth.%s: %s", k, whyOAuthExtra)
		}
		o.bad = append(o.bad, oa.bad...)
	}
	if remote := o.boolean("remote"); remote != nil && *remote {
		r.note("skipped field remote: Zed's remote development has no equivalent; Plexus runs the server on this machine")
	}
	settings, _ := o.lookup("settings")
	if source == "extension" || settings != nil && r.command == "" && r.url == "" {
		r.skip = "configured for a Zed extension, which starts the server itself: add the server's own command or URL with `plexus add`"
	} else if settings != nil {
		r.note("skipped field settings: those are for a Zed extension")
	}
	o.skipFields(&r, nil, cosmetic...)
	r.bad = o.bad
	return r
}

// ---- goose ----

func gooseServers(root *node) (*found, error) {
	if err := rootObject(root, "a YAML mapping"); err != nil {
		return nil, err
	}
	exts, err := objectAt(root, "", "extensions")
	if err != nil {
		return nil, err
	}
	if exts == nil {
		return nil, &Error{Msg: "no extensions mapping" + elsewhere(root)}
	}
	return &found{entries: entries(exts, "extensions", gooseEntry)}, nil
}

func gooseEntry(o *obj) rawServer {
	var r rawServer
	typ := o.str("type")
	switch typ {
	case "builtin", "platform", "frontend", "inline_python":
		r.skip = fmt.Sprintf("a goose extension of type %s, built into goose: Plexus cannot run it", typ)
		for _, k := range o.rest() {
			o.used[k] = true
		}
		return r
	case "streamable_http":
		r.typ = "http"
	default:
		r.typ = typ
	}
	r.command = o.str("cmd")
	r.args, _ = o.strs("args")
	r.env = o.strMap("envs")
	r.passEnv, _ = o.strs("env_keys")
	r.cwd = o.str("cwd")
	r.url = o.str("uri")
	r.headers = o.strMap("headers")
	r.enabled = o.boolean("enabled")
	sec, ok := o.number("timeout")
	r.callMs = r.seconds("timeout", sec, ok)
	r.enabledTools, _ = o.strs("available_tools")
	o.skipFields(&r, nil, cosmetic...)
	r.bad = o.bad
	return r
}

// ---- Moltis ----

func moltisServers(root *node) (*found, error) {
	mcp, err := objectAt(root, "", "mcp")
	if err != nil {
		return nil, err
	}
	servers, err := objectAt(mcp, "mcp", "servers")
	if err != nil {
		return nil, err
	}
	if servers == nil {
		return nil, &Error{Msg: "no [mcp.servers] table" + elsewhere(root)}
	}
	f := &found{env: map[string]string{}}
	section := newObj(mcp, "mcp")
	section.lookup("servers")
	defaultSec, hasDefault := section.number("request_timeout_secs")
	for _, k := range section.rest() {
		f.notes = append(f.notes, fmt.Sprintf("skipped the setting mcp.%s: Plexus has no such setting", k))
	}
	if len(section.bad) > 0 {
		return nil, &Error{Path: "mcp.request_timeout_secs", Msg: "want a number"}
	}
	f.entries = entries(servers, "mcp.servers", func(o *obj) rawServer {
		r := moltisEntry(o)
		if r.callMs == 0 && hasDefault {
			r.callMs = r.seconds("mcp.request_timeout_secs", defaultSec, true)
		}
		return r
	})
	env, err := objectAt(root, "", "env")
	if err != nil {
		return nil, err
	}
	if env != nil {
		for _, m := range env.members {
			if s, ok := m.val.scalarText(); ok && config.ValidVarName(m.key) && !m.dup {
				f.env[m.key] = s
			}
		}
	}
	return f, nil
}

func moltisEntry(o *obj) rawServer {
	var r rawServer
	r.typ = o.str("transport")
	r.command = o.str("command")
	r.args, _ = o.strs("args")
	r.env = o.strMap("env")
	r.url = o.str("url")
	r.headers = o.strMap("headers")
	r.enabled = o.boolean("enabled")
	sec, ok := o.number("request_timeout_secs")
	r.callMs = r.seconds("request_timeout_secs", sec, ok)
	if n, ok := o.number("max_restart_attempts"); ok {
		if n >= 0 && n <= math.MaxInt32 && n == math.Trunc(n) {
			m := int(n)
			r.maxRestarts = &m
		} else {
			r.note("skipped field max_restart_attempts: not a usable count")
		}
	}
	if oa := o.object("oauth"); oa != nil {
		r.oauthClientID = oa.str("client_id")
		r.oauthSecret = oa.str("client_secret")
		r.oauthAuthURL = oa.str("auth_url")
		r.oauthTokenURL = oa.str("token_url")
		r.oauthScopes, _ = oa.strs("scopes")
		for _, k := range oa.rest() {
			r.note("skipped field oauth.%s: Plexus has no such setting", k)
		}
		o.bad = append(o.bad, oa.bad...)
	}
	o.skipFields(&r, nil, cosmetic...)
	r.bad = o.bad
	return r
}
