package importer

import "strings"

// ---- opencode (opencode.json, ~/.config/opencode/opencode.json) ----

// opencode keeps its servers under "mcp": each has type local (command
// as an array, environment) or remote (url, headers), and refers to
// variables as {env:VAR}.
func opencodeEntry(o *obj) rawServer {
	var r rawServer
	r.typ = o.str("type")
	if v, line := o.lookup("command"); v != nil {
		switch v.kind {
		case arrayKind:
			words := o.strsOf("command", v)
			if len(words) > 0 {
				r.command, r.args = words[0], words[1:]
			}
		case stringKind:
			r.command = v.text
		default:
			o.wrong("command", line, "an array of strings", v)
		}
	}
	r.env = o.strMap("environment")
	r.url = o.str("url")
	r.headers = o.strMap("headers")
	r.enabled = o.boolean("enabled")
	// The time opencode waits for a server's tools: Plexus's startup timeout.
	if ms, ok := o.number("timeout"); ok {
		r.startupMs = r.seconds("timeout", ms/1000, true)
	}
	if v, _ := o.lookup("oauth"); v != nil {
		if oa := newObj(v, o.at("oauth")); v.kind == objectKind {
			r.oauthClientID = oa.str("clientId")
			r.oauthSecret = oa.str("clientSecret")
			r.oauthScopes = strings.Fields(oa.str("scope"))
			for _, k := range oa.rest() {
				r.note("skipped field oauth.%s: %s", k, whyOAuthExtra)
			}
			o.bad = append(o.bad, oa.bad...)
		} else if v.kind == boolKind && !v.boolean {
			r.note("skipped field oauth: Plexus tries OAuth only when the server asks for it")
		}
	}
	o.skipFields(&r, nil, cosmetic...)
	r.bad = o.bad
	return r
}
