// Package clientconf registers Plexus in another MCP client's own settings
// file, and takes it out again (`plexus connect` and `plexus disconnect`).
//
// Each client's file is edited as text — JSON and JSON with comments,
// Codex's TOML, Goose's YAML — so that only Plexus's entry changes: the
// user's other servers, their formatting and comments stay byte for byte.
// Every edit is checked by decoding the result: the entry is as wanted and
// everything else decodes as before, or the edit is refused. Writing keeps
// a backup and replaces the file atomically.
package clientconf

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// EntryName is the name Plexus registers itself under in every client.
const EntryName = "plexus"

// Scopes of a client's settings.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// Options say where the client's files are and how it starts Plexus.
type Options struct {
	// Home is the user's home directory; Dir the project folder, for the
	// project scope.
	Home, Dir string
	// Scope is ScopeUser (the default) or ScopeProject.
	Scope string
	// GOOS picks the locations that differ between systems.
	GOOS string
	// Getenv reads CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_CONFIG_HOME and, on
	// Windows, APPDATA; nil reads none.
	Getenv func(string) string
	// Command is how the client starts Plexus (a path, or "plexus").
	Command string
	// Launch is what the entry adds to `COMMAND mcp` when Plexus does not
	// run on its defaults: the home and the loopback address it was set
	// up with, so that a client that starts `plexus mcp` reaches (or
	// starts) that daemon, never a second one on ~/.plexus.
	Launch Launch
}

// Launch is a non-default home or listening address of Plexus.
type Launch struct {
	// Home is PLEXUS_HOME for the entry's environment; "" for the default.
	Home string
	// Listen is the address `plexus mcp --listen` hands the daemon it
	// starts; "" for the default.
	Listen string
}

// args is the entry's arguments after the command.
func (l Launch) args() []string {
	if l.Listen == "" {
		return []string{"mcp"}
	}
	return []string{"mcp", "--listen", l.Listen}
}

// env is the entry's environment: PLEXUS_HOME, if not the default.
func (l Launch) env() map[string]string {
	if l.Home == "" {
		return map[string]string{}
	}
	return map[string]string{"PLEXUS_HOME": l.Home}
}

func (o Options) env(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// config is ~/.config, or $XDG_CONFIG_HOME.
func (o Options) config() string {
	if x := o.env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(o.Home, ".config")
}

// appSupport is where a desktop app keeps its settings: ~/.config (or
// $XDG_CONFIG_HOME), ~/Library/Application Support on macOS, %APPDATA% on
// Windows.
func (o Options) appSupport() string {
	switch o.GOOS {
	case "darwin":
		return filepath.Join(o.Home, "Library", "Application Support")
	case "windows":
		return o.appData()
	}
	return o.config()
}

// appData is Windows's %APPDATA%, the roaming profile folder.
func (o Options) appData() string {
	if a := o.env("APPDATA"); a != "" {
		return a
	}
	return filepath.Join(o.Home, "AppData", "Roaming")
}

// client is what connect knows of one client.
type client struct {
	title  string
	format string // json, jsonc, toml, yaml
	// keys is the JSON path of the object that holds the servers.
	keys []string
	user func(Options) string
	// project is the file of the project scope; nil if there is none.
	project func(Options) string
	entry   func(cmd string, l Launch) any
}

// kv is an ordered JSON object, so that entries read as people write them.
type kv []struct {
	k string
	v any
}

func (o kv) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func obj(pairs ...any) kv {
	var o kv
	for i := 0; i+1 < len(pairs); i += 2 {
		o = append(o, struct {
			k string
			v any
		}{pairs[i].(string), pairs[i+1]})
	}
	return o
}

// plainEntry is {"command", "args"}, with "env" only when there is one.
func plainEntry(cmd string, l Launch) any {
	if l.Home == "" {
		return obj("command", cmd, "args", l.args())
	}
	return obj("command", cmd, "args", l.args(), "env", l.env())
}

var clients = map[string]client{
	"claude": {title: "Claude Code", format: "json", keys: []string{"mcpServers"},
		user: func(o Options) string {
			if d := o.env("CLAUDE_CONFIG_DIR"); d != "" {
				return filepath.Join(d, ".claude.json")
			}
			return filepath.Join(o.Home, ".claude.json")
		},
		project: func(o Options) string { return filepath.Join(o.Dir, ".mcp.json") },
		entry: func(cmd string, l Launch) any {
			return obj("type", "stdio", "command", cmd, "args", l.args(), "env", l.env())
		}},
	"claude-desktop": {title: "Claude Desktop", format: "json", keys: []string{"mcpServers"},
		user: func(o Options) string {
			return filepath.Join(o.appSupport(), "Claude", "claude_desktop_config.json")
		},
		entry: plainEntry},
	"cursor": {title: "Cursor", format: "json", keys: []string{"mcpServers"},
		user:    func(o Options) string { return filepath.Join(o.Home, ".cursor", "mcp.json") },
		project: func(o Options) string { return filepath.Join(o.Dir, ".cursor", "mcp.json") },
		entry:   plainEntry},
	"vscode": {title: "VS Code", format: "jsonc", keys: []string{"servers"},
		user:    func(o Options) string { return filepath.Join(o.appSupport(), "Code", "User", "mcp.json") },
		project: func(o Options) string { return filepath.Join(o.Dir, ".vscode", "mcp.json") },
		entry: func(cmd string, l Launch) any {
			if l.Home == "" {
				return obj("type", "stdio", "command", cmd, "args", l.args())
			}
			return obj("type", "stdio", "command", cmd, "args", l.args(), "env", l.env())
		}},
	"windsurf": {title: "Windsurf", format: "json", keys: []string{"mcpServers"},
		user:  func(o Options) string { return filepath.Join(o.Home, ".codeium", "windsurf", "mcp_config.json") },
		entry: plainEntry},
	"zed": {title: "Zed", format: "jsonc", keys: []string{"context_servers"},
		user: func(o Options) string {
			if o.GOOS == "windows" {
				return filepath.Join(o.appData(), "Zed", "settings.json")
			}
			return filepath.Join(o.config(), "zed", "settings.json")
		},
		project: func(o Options) string { return filepath.Join(o.Dir, ".zed", "settings.json") },
		entry: func(cmd string, l Launch) any {
			return obj("source", "custom", "command", cmd, "args", l.args(), "env", l.env())
		}},
	"gemini": {title: "Gemini CLI", format: "jsonc", keys: []string{"mcpServers"},
		user:    func(o Options) string { return filepath.Join(o.Home, ".gemini", "settings.json") },
		project: func(o Options) string { return filepath.Join(o.Dir, ".gemini", "settings.json") },
		entry:   plainEntry},
	"opencode": {title: "opencode", format: "jsonc", keys: []string{"mcp"},
		user:    func(o Options) string { return filepath.Join(o.config(), "opencode", "opencode.json") },
		project: func(o Options) string { return filepath.Join(o.Dir, "opencode.json") },
		entry: func(cmd string, l Launch) any {
			if l.Home == "" {
				return obj("type", "local", "command", append([]string{cmd}, l.args()...), "enabled", true)
			}
			return obj("type", "local", "command", append([]string{cmd}, l.args()...), "enabled", true, "environment", l.env())
		}},
	"codex": {title: "Codex CLI", format: "toml",
		user: func(o Options) string {
			if d := o.env("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml")
			}
			return filepath.Join(o.Home, ".codex", "config.toml")
		}},
	"goose": {title: "Goose", format: "yaml",
		user: func(o Options) string {
			if o.GOOS == "windows" {
				return filepath.Join(o.appData(), "Block", "goose", "config", "config.yaml")
			}
			return filepath.Join(o.config(), "goose", "config.yaml")
		}},
}

// Clients lists the clients connect knows, sorted.
func Clients() []string {
	names := make([]string, 0, len(clients))
	for n := range clients {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Title is a client's name for people ("Claude Code").
func Title(name string) string { return clients[name].title }

// UnknownClientError is returned for a client connect does not know.
type UnknownClientError struct{ Client string }

func (e *UnknownClientError) Error() string {
	c := e.Client
	if r := []rune(c); len(r) > 40 {
		c = string(r[:40]) + "…"
	}
	return fmt.Sprintf("unknown client %q: want one of %s", c, strings.Join(Clients(), ", "))
}

// Path is the file that holds the client's MCP servers in o.Scope.
func Path(name string, o Options) (string, error) {
	c, ok := clients[name]
	if !ok {
		return "", &UnknownClientError{Client: name}
	}
	switch o.Scope {
	case "", ScopeUser:
		return c.user(o), nil
	case ScopeProject:
		if c.project == nil {
			return "", fmt.Errorf("%s has no project settings: leave out --scope", c.title)
		}
		return c.project(o), nil
	}
	return "", fmt.Errorf("unknown scope %q: want user or project", o.Scope)
}

// Edit returns src with Plexus's entry set (connect) or removed, and
// whether that changes anything. command is how the client starts Plexus,
// on its defaults.
func Edit(name string, src []byte, command string, connect bool) ([]byte, error) {
	return EditLaunch(name, src, command, Launch{}, connect)
}

// EditLaunch is Edit for a Plexus whose home or address is not the
// default: the entry carries them (Launch).
func EditLaunch(name string, src []byte, command string, l Launch, connect bool) ([]byte, error) {
	c, ok := clients[name]
	if !ok {
		return nil, &UnknownClientError{Client: name}
	}
	var out []byte
	var err error
	switch c.format {
	case "toml":
		if connect {
			out, err = setTOML(src, EntryName, codexBlock(command, l))
		} else {
			out, _, err = removeTOML(src, EntryName)
		}
	case "yaml":
		if connect {
			out, err = setYAML(src, EntryName, gooseBlock(command, l))
		} else {
			out, _, err = removeYAML(src, EntryName)
		}
	default:
		path := append(slices.Clone(c.keys), EntryName)
		if connect {
			out, err = setJSON(src, path, c.entry(command, l))
		} else {
			out, _, err = removeJSON(src, path)
		}
		if err == nil && c.format == "json" && len(strings.TrimSpace(string(src))) > 0 && !json.Valid(src) {
			// Comments where the client reads plain JSON: say so rather
			// than leave them for the client to trip on.
			err = fmt.Errorf("the file is not plain JSON, which %s reads", c.title)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := check(c, src, out, command, connect); err != nil {
		return nil, fmt.Errorf("the edit did not come out right (%v): nothing was written; please report this", err)
	}
	return out, nil
}

// quoted is s as a JSON string, which a TOML basic string and a YAML
// double-quoted string read the same.
func quoted(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

func quotedList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quoted(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func codexBlock(cmd string, l Launch) string {
	b := "[mcp_servers." + EntryName + "]\ncommand = " + quoted(cmd) + "\nargs = " + quotedList(l.args()) + "\n"
	if l.Home != "" {
		b += "env = { PLEXUS_HOME = " + quoted(l.Home) + " }\n"
	}
	return b
}

func gooseBlock(cmd string, l Launch) string {
	envs := "{}"
	if l.Home != "" {
		envs = "{PLEXUS_HOME: " + quoted(l.Home) + "}"
	}
	args := "[mcp]"
	if l.Listen != "" {
		args = quotedList(l.args())
	}
	return EntryName + ":\n  type: stdio\n  name: " + EntryName + "\n  enabled: true\n  cmd: " + quoted(cmd) +
		"\n  args: " + args + "\n  envs: " + envs + "\n  env_keys: []\n  timeout: 300\n"
}

// decode reads a client's file for check; an empty file is an empty map.
func decode(format string, src []byte) (map[string]any, error) {
	doc := map[string]any{}
	if strings.TrimSpace(string(src)) == "" {
		return doc, nil
	}
	var err error
	switch format {
	case "toml":
		_, err = toml.Decode(string(src), &doc)
	case "yaml":
		err = yaml.Unmarshal(src, &doc)
	default:
		err = json.Unmarshal(standardJSON(src), &doc)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, err
}

// serverKeys is the path of the object that holds the client's servers,
// in the decoded file.
func (c client) serverKeys() []string {
	switch c.format {
	case "toml":
		return []string{"mcp_servers"}
	case "yaml":
		return []string{"extensions"}
	}
	return c.keys
}

// decodeBoth decodes a file before and after an edit.
func decodeBoth(format string, before, after []byte) (b, a map[string]any, err error) {
	if b, err = decode(format, before); err == nil {
		a, err = decode(format, after)
	}
	return b, a, err
}

// check decodes before and after: after holds the entry (or not), and
// the rest is what it was.
func check(c client, before, after []byte, command string, connect bool) error {
	b, a, err := decodeBoth(c.format, before, after)
	if err != nil {
		return err
	}
	keys := c.serverKeys()
	got := pluck(a, keys)
	pluck(b, keys)
	if connect {
		if got == nil {
			return fmt.Errorf("the entry is missing")
		}
		if !strings.Contains(fmt.Sprint(got), command) {
			return fmt.Errorf("the entry does not run %q", command)
		}
	} else if got != nil {
		return fmt.Errorf("the entry is still there")
	}
	// With the entry and the objects left empty without it taken out,
	// both decode the same.
	prune(a, keys)
	prune(b, keys)
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("other settings changed")
	}
	return nil
}

// pluck takes the entry out of doc, so that doc compares without it,
// and returns it.
func pluck(doc map[string]any, keys []string) any {
	m := doc
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	entry := m[EntryName]
	delete(m, EntryName)
	return entry
}

// prune removes the objects along keys that are empty.
func prune(doc map[string]any, keys []string) {
	if len(keys) == 0 {
		return
	}
	if v, ok := doc[keys[0]]; ok && v == nil {
		delete(doc, keys[0]) // "extensions:" with nothing under it
		return
	}
	next, ok := doc[keys[0]].(map[string]any)
	if !ok {
		return
	}
	prune(next, keys[1:])
	if len(next) == 0 {
		delete(doc, keys[0])
	}
}
