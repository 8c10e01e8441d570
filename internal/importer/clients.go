package importer

import (
	"fmt"

	"github.com/plexus-mcp/plexus/internal/config"
)

// The readers of the clients that copied the mcpServers format with
// changes of their own: Gemini CLI, Windsurf, Cline.

// ---- Gemini CLI (~/.gemini/settings.json, .gemini/settings.json) ----

var geminiReasons = map[string]string{
	"trust":                "Gemini's trust skips its confirmations; Plexus has no per-tool approval settings",
	"oauth":                whyOAuthExtra,
	"authProviderType":     whyOAuthExtra,
	"targetAudience":       whyOAuthExtra,
	"targetServiceAccount": whyOAuthExtra,
}

// commandEntry reads the fields most clients spell alike: type, command,
// args, env and cwd.
func commandEntry(o *obj) rawServer {
	var r rawServer
	r.typ = o.str("type")
	r.command = o.str("command")
	r.args, _ = o.strs("args")
	r.env = o.strMap("env")
	r.cwd = o.str("cwd")
	return r
}

// geminiEntry reads one Gemini CLI server: httpUrl is streamable HTTP,
// url is SSE unless type says otherwise, timeout is in milliseconds.
func geminiEntry(o *obj) rawServer {
	r := commandEntry(o)
	if u := o.str("httpUrl"); u != "" {
		r.url, r.typ = u, "http"
		if o.has("url") {
			r.note("skipped field url: httpUrl is the one Gemini CLI uses when both are set")
			o.str("url")
		}
	} else if u := o.str("url"); u != "" {
		r.url = u
		if r.typ == "" {
			r.typ = "sse" // Gemini CLI's url is an SSE endpoint
		}
	}
	r.headers = o.strMap("headers")
	if ms, ok := o.number("timeout"); ok {
		r.callMs = r.seconds("timeout", ms/1000, true)
	}
	r.enabledTools, _ = o.strs("includeTools")
	r.disabledTools, _ = o.strs("excludeTools")
	o.skipFields(&r, geminiReasons, cosmetic...)
	r.bad = o.bad
	return r
}

// ---- Windsurf (~/.codeium/windsurf/mcp_config.json) ----

// windsurfEntry is mcpEntry (which reads serverUrl) with Windsurf's list
// of disabled tools.
func windsurfEntry(o *obj) rawServer {
	tools, _ := o.strs("disabledTools")
	r := mcpEntry(o)
	r.disabledTools = tools
	return r
}

// ---- Cline (cline_mcp_settings.json in VS Code's global storage) ----

// clineEntry is mcpEntry with Cline's timeout, in seconds.
func clineEntry(o *obj) rawServer {
	sec, ok := o.number("timeout")
	r := mcpEntry(o)
	r.callMs = r.seconds("timeout", sec, ok)
	return r
}

// serversUnder reads the servers of a JSON file kept in one object at
// key, each entry read by read.
func serversUnder(key string, read func(*obj) rawServer) func(*node) (*found, error) {
	return func(root *node) (*found, error) {
		if err := rootObject(root, "a JSON object"); err != nil {
			return nil, err
		}
		servers, err := objectAt(root, "", key)
		if err != nil {
			return nil, err
		}
		if servers == nil {
			return nil, &Error{Msg: "no " + key + " object" + elsewhere(root)}
		}
		return &found{entries: entries(servers, key, read)}, nil
	}
}

// listEntries reads a list of server blocks that carry their name in a
// field (Continue's mcpServers).
func listEntries(list *node, path, nameKey string, read func(*obj) rawServer) []rawEntry {
	var out []rawEntry
	seen := map[string]bool{}
	for i, el := range list.elems {
		src := config.IndexPath(path, i)
		e := rawEntry{source: src, line: el.line}
		if el.kind != objectKind {
			e.skip, e.noName = locate(src, el.line)+": want a mapping, not "+article(el.kind.String()), true
			out = append(out, e)
			continue
		}
		name := el.get(nameKey)
		if name == nil || name.kind != stringKind || name.text == "" {
			e.skip, e.noName = locate(src, el.line)+": has no "+nameKey, true
			out = append(out, e)
			continue
		}
		e.original = name.text
		if seen[name.text] {
			e.skip, e.noName = fmt.Sprintf("repeats the name %q; the first entry of that name is the one imported", shorten(name.text)), true
			out = append(out, e)
			continue
		}
		seen[name.text] = true
		o := newObj(el, src)
		o.used[nameKey] = true
		e.raw = read(o)
		out = append(out, e)
	}
	return out
}
