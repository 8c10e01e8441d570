// Package importer reads the MCP server settings of other clients — Claude
// Code (user and project files), Claude Desktop, Cursor, VS Code, Codex,
// Zed, goose, Moltis, Gemini CLI, Windsurf, Cline, opencode and Continue —
// and turns them into Plexus servers (R-CFG-5).
//
// It is pure: ParseIn takes a file's content and returns the servers, the
// secrets moved out of them and a report; the daemon applies them through
// host.Import. Plexus settings hold only references to secrets (R-CFG-3), so
// every literal value of the file that looks like a secret — by its name
// (TOKEN, KEY, SECRET, PASSWORD, AUTH, CREDENTIAL, …) or its shape (a
// bearer value, a URL with a password or a key in its query, an access
// token's prefix, a long random word) — becomes a managed secret named
// <SERVER>_<KEY>, and the server refers to it by name; bearer tokens and
// OAuth client secrets always do. Other env values stay plain values
// ({"value": "TEXT"}) and other header values text, visible and editable
// (judge.go).
//
// Nothing is dropped silently: every entry of the file is reported as
// imported, renamed or skipped, with each field that could not be carried
// over and why. No report line and no error ever repeats a value from the
// file — only names, key paths and line numbers — since any value may be a
// secret. The output depends only on the input: maps are walked in sorted
// order, and collisions are settled the same way every time.
package importer

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Dialects: the clients whose files ParseIn reads.
const (
	Claude        = "claude"         // Claude Code: ~/.claude.json, .mcp.json
	ClaudeDesktop = "claude-desktop" // claude_desktop_config.json
	Cursor        = "cursor"         // ~/.cursor/mcp.json
	VSCode        = "vscode"         // .vscode/mcp.json
	Codex         = "codex"          // ~/.codex/config.toml
	Zed           = "zed"            // ~/.config/zed/settings.json
	Goose         = "goose"          // ~/.config/goose/config.yaml
	Moltis        = "moltis"         // moltis.toml
	ClaudeProject = "claude-project" // Claude Code's project file, .mcp.json
	Gemini        = "gemini"         // ~/.gemini/settings.json
	Windsurf      = "windsurf"       // ~/.codeium/windsurf/mcp_config.json
	Cline         = "cline"          // cline_mcp_settings.json
	Opencode      = "opencode"       // opencode.json
	Continue      = "continue"       // ~/.continue/config.yaml
)

// Dialects lists the dialects ParseIn knows, sorted.
func Dialects() []string { return slices.Sorted(maps.Keys(dialects)) }

// Action is what became of an entry.
type Action string

// Actions.
const (
	Imported Action = "imported"
	Renamed  Action = "renamed" // imported under another name
	Skipped  Action = "skipped"
)

// Result is what ParseIn found.
type Result struct {
	Dialect string
	// Servers are the servers to add, by Plexus name. Every one is valid
	// (config.Validate) and refers to its secrets by name only.
	Servers map[string]config.Server
	// Secrets are the managed variables to set: the literal values moved
	// out of the servers, by variable name.
	Secrets map[string]string
	// Entries report on every server entry of the file, sorted by Source.
	Entries []Entry
	// Notes are about the file as a whole.
	Notes []string
	// Missing lists the variables the servers refer to that are neither
	// among Secrets nor known to the env function given to ParseIn.
	Missing []string
}

// Entry reports what became of one server entry of the file.
type Entry struct {
	// Source is the entry's key path in the file, e.g. mcpServers.github.
	Source string
	// Original is the entry's name in the file.
	Original string
	// Name is the Plexus name; empty when skipped.
	Name   string
	Action Action
	// Reason says why the entry was renamed or skipped.
	Reason string
	// Notes say what changed on the way in: fields skipped, literal values
	// moved to managed secrets, placeholders rewritten.
	Notes []string
	// Secrets are the managed variables that hold the literal values moved
	// out of this entry.
	Secrets []string
	// Missing are the variables the server refers to that are not set.
	Missing []string
}

// Error is a file ParseIn cannot read. It names the dialect, the key path
// and the line where they are known, and never quotes a value.
type Error struct {
	Dialect string
	Path    string // key path, e.g. mcpServers.github.args; empty for the whole file
	Line    int    // from 1; 0 when not known
	Msg     string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Dialect != "" {
		b.WriteString(e.Dialect + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// dialect describes how to read one client's file.
type dialect struct {
	format string // json, toml, yaml
	syntax syntax
	// servers finds the server entries in the file's tree.
	servers func(root *node) (*found, error)
}

// found is what a dialect finds in a file.
type found struct {
	entries []rawEntry
	notes   []string
	// inputs maps a VS Code input id to its declaration, for notes.
	inputs map[string]*node
	// env is a file-level set of variables (Moltis's [env]): values for the
	// variables the servers refer to.
	env map[string]string
}

// rawEntry is one server entry as the dialect read it.
type rawEntry struct {
	source   string
	original string
	line     int
	raw      rawServer
	// skip, when set, skips the entry without building it.
	skip string
	// noName marks entries that never claim a name (a project's servers).
	noName bool
}

var dialects = map[string]dialect{
	Claude:        {format: "json", syntax: syntax{braces: true, defaults: true}, servers: claudeServers(true)},
	ClaudeDesktop: {format: "json", syntax: syntax{braces: true, defaults: true}, servers: claudeServers(false)},
	Cursor:        {format: "json", syntax: syntax{braces: true, envColon: true, editor: true}, servers: cursorServers},
	VSCode:        {format: "json", syntax: syntax{braces: true, envColon: true, input: true, editor: true}, servers: vscodeServers},
	Codex:         {format: "toml", syntax: syntax{braces: true}, servers: codexServers},
	Zed:           {format: "json", syntax: syntax{braces: true}, servers: zedServers},
	Goose:         {format: "yaml", syntax: syntax{braces: true}, servers: gooseServers},
	Moltis:        {format: "toml", syntax: syntax{braces: true, bare: true}, servers: moltisServers},
	ClaudeProject: {format: "json", syntax: syntax{braces: true, defaults: true}, servers: claudeServers(false)},
	Gemini:        {format: "json", syntax: syntax{braces: true, bare: true}, servers: serversUnder("mcpServers", geminiEntry)},
	Windsurf:      {format: "json", syntax: syntax{braces: true, envColon: true}, servers: serversUnder("mcpServers", windsurfEntry)},
	Cline:         {format: "json", syntax: syntax{}, servers: serversUnder("mcpServers", clineEntry)},
	Opencode:      {format: "json", syntax: syntax{curly: true}, servers: serversUnder("mcp", opencodeEntry)},
	Continue:      {format: "yaml", syntax: syntax{secrets: true}, servers: continueServers},
}

// ParseIn reads content in the given dialect, for a file in the folder dir
// (absolute): a relative cwd of a server resolves against it, as the other
// client resolved it. env tells whether a variable is set where the daemon
// resolves references (its value is not used): it serves only to report
// the variables still missing. Errors are *Error.
func ParseIn(dialectName string, content []byte, dir string, env func(string) (string, bool)) (*Result, error) {
	d, ok := dialects[dialectName]
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("unknown dialect %q: want one of %s", shorten(dialectName), strings.Join(Dialects(), ", "))}
	}
	root, err := decode(d.format, content)
	if err == nil {
		var f *found
		if f, err = d.servers(root); err == nil {
			res := convert(dialectName, dir, d.syntax, f)
			res.missing(env)
			return res, nil
		}
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Msg: err.Error()}
	}
	e.Dialect = dialectName
	return nil, e
}

func decode(format string, content []byte) (*node, error) {
	switch format {
	case "toml":
		return parseTOML(content)
	case "yaml":
		return parseYAML(content)
	}
	return parseJSON(content)
}

// Detect guesses the dialect of a file from its name (which may be empty)
// and its content.
func Detect(source string, content []byte) (string, error) {
	base := strings.ToLower(filepath.Base(filepath.ToSlash(source)))
	slash := strings.ToLower(filepath.ToSlash(source))
	switch ext := filepath.Ext(base); ext {
	case ".toml":
		root, err := parseTOML(content)
		if err != nil {
			return "", err
		}
		return detectTOML(root)
	case ".yaml", ".yml":
		if root, err := parseYAML(content); err == nil && root.get("mcpServers") != nil {
			return Continue, nil
		}
		return Goose, nil
	}
	if root, err := parseJSON(content); err == nil {
		return detectJSON(root, base, slash)
	} else if strings.HasSuffix(base, ".json") {
		return "", err
	}
	if root, err := parseTOML(content); err == nil {
		if d, err := detectTOML(root); err == nil {
			return d, nil
		}
	}
	if root, err := parseYAML(content); err == nil {
		switch {
		case root.get("extensions") != nil:
			return Goose, nil
		case root.get("mcpServers") != nil:
			return Continue, nil
		}
	}
	return "", &Error{Msg: "cannot tell which client's file this is: name it with --dialect (" + strings.Join(Dialects(), ", ") + ")"}
}

func detectTOML(root *node) (string, error) {
	switch {
	case root.get("mcp_servers") != nil:
		return Codex, nil
	case root.get("mcp").get("servers") != nil:
		return Moltis, nil
	}
	return "", &Error{Msg: "no [mcp_servers] (Codex) or [mcp.servers] (Moltis) table: name the format with --dialect"}
}

func detectJSON(root *node, base, slash string) (string, error) {
	switch {
	case root.get("context_servers") != nil:
		return Zed, nil
	case root.get("mcp") != nil && root.get("mcp").get("servers") == nil && isOpencode(root, base):
		return Opencode, nil
	case root.get("servers") != nil || root.get("mcp").get("servers") != nil:
		return VSCode, nil
	case root.get("mcpServers") != nil || root.get("projects") != nil:
		switch {
		case strings.Contains(slash, "/.cursor/") || strings.HasPrefix(slash, ".cursor/"):
			return Cursor, nil
		case base == "claude_desktop_config.json":
			return ClaudeDesktop, nil
		case base == ".mcp.json":
			return ClaudeProject, nil
		case strings.Contains(slash, "/.gemini/") || strings.HasPrefix(slash, ".gemini/"):
			return Gemini, nil
		case base == "mcp_config.json" && strings.Contains(slash, "windsurf"):
			return Windsurf, nil
		case base == "cline_mcp_settings.json":
			return Cline, nil
		case usesHTTPURL(root.get("mcpServers")):
			// httpUrl is Gemini CLI's own key (its settings.json copied
			// elsewhere): read as Claude's, the server would be skipped.
			return Gemini, nil
		}
		return Claude, nil
	}
	return "", &Error{Msg: "no mcpServers, servers, mcp or context_servers object: name the format with --dialect"}
}

// usesHTTPURL reports whether a server of servers has Gemini CLI's
// httpUrl key.
func usesHTTPURL(servers *node) bool {
	if servers == nil || servers.kind != objectKind {
		return false
	}
	for _, m := range servers.members {
		if m.val.get("httpUrl") != nil {
			return true
		}
	}
	return false
}

// isOpencode tells opencode's file by its name or its schema.
func isOpencode(root *node, base string) bool {
	if strings.HasPrefix(base, "opencode.") {
		return true
	}
	schema := root.get("$schema")
	return schema != nil && schema.kind == stringKind && strings.Contains(schema.text, "opencode")
}

// shorten keeps messages bounded when a name is huge.
func shorten(s string) string {
	const limit = 40
	if r := []rune(s); len(r) > limit {
		return string(r[:limit]) + "…"
	}
	return s
}
