package serverconf

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"
)

var (
	// varName is the rule for managed variable names.
	varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// notNameChar is what a suggested server name may not hold (R-CFG-2:
	// ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$).
	notNameChar = regexp.MustCompile(`[^a-z0-9_-]+`)
	notVarChar  = regexp.MustCompile(`[^A-Z0-9_]+`)
)

// IsVarName reports whether s can name a managed variable.
func IsVarName(s string) bool { return varName.MatchString(s) }

// VarFor returns the managed variable a form stores one of server's
// secrets under: SEARCH_TOKEN for the bearer token of server search,
// SEARCH_X_API_KEY for its header X-Api-Key. The server's name is part of
// it, so that a form never overwrites another server's secret.
func VarFor(server, what string) string {
	v := notVarChar.ReplaceAllString(strings.ToUpper(server+"_"+what), "_")
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		v = "MCP_" + v
	}
	return v
}

// genericHostLabels say nothing about which server a host serves.
var genericHostLabels = map[string]bool{"mcp": true, "api": true, "www": true, "app": true, "server": true, "sse": true}

// NameFromURL suggests a server name from its URL's host:
// https://mcp.example.com/mcp → example. A loopback or IP address gives
// "local"; a URL without a host gives "".
func NameFromURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return ""
	}
	if host == "localhost" || net.ParseIP(host) != nil {
		return "local"
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(labels) > 1 {
		labels = labels[:len(labels)-1] // the top-level domain
	}
	for _, l := range labels {
		if !genericHostLabels[l] {
			return cleanName(l)
		}
	}
	return cleanName(labels[len(labels)-1])
}

// launchers run a package named by a later word rather than being the
// server themselves.
var launchers = map[string]bool{
	"npx": true, "bunx": true, "uvx": true, "pipx": true, "pnpm": true, "yarn": true, "bun": true,
	"node": true, "deno": true, "python": true, "python3": true, "uv": true, "go": true,
	"docker": true, "podman": true,
}

// launcherVerbs are the subcommands of launchers (pnpm dlx, uv run, go run).
var launcherVerbs = map[string]bool{"run": true, "dlx": true, "x": true, "exec": true, "tool": true}

// NameFromArgv suggests a server name from the command that runs it: the
// package a launcher runs (npx -y @modelcontextprotocol/server-filesystem
// /srv → filesystem), or else the program itself (/usr/local/bin/docs-mcp →
// docs).
func NameFromArgv(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	word := argv[0]
	if launchers[path.Base(argv[0])] {
		word = ""
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") || launcherVerbs[a] {
				continue
			}
			word = a
			break
		}
		if word == "" {
			return cleanName(path.Base(argv[0]))
		}
	}
	return packageName(word)
}

// packageName strips a package reference down to what names the server:
// scope, path, version, tag, extension, and the words "mcp" and "server".
func packageName(p string) string {
	p = strings.ToLower(p)
	if at := strings.LastIndex(p, "@"); at > 0 {
		p = p[:at] // @scope/pkg@1.2.3
	}
	p = path.Base(strings.TrimRight(p, "/"))
	if i := strings.IndexAny(p, ":="); i > 0 {
		p = p[:i] // image:tag, pkg==1.0
	}
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".py", ".exe"} {
		p = strings.TrimSuffix(p, ext)
	}
	for changed := true; changed; {
		changed = false
		for _, pre := range []string{"mcp-server-", "mcp_server_", "server-", "mcp-", "mcp_"} {
			if s := strings.TrimPrefix(p, pre); s != p && s != "" {
				p, changed = s, true
			}
		}
		for _, suf := range []string{"-mcp-server", "_mcp_server", "-server", "-mcp", "_mcp"} {
			if s := strings.TrimSuffix(p, suf); s != p && s != "" {
				p, changed = s, true
			}
		}
	}
	return cleanName(p)
}

// cleanName makes s a valid server name, or "".
func cleanName(s string) string {
	s = notNameChar.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.TrimLeft(s, "-_")
	if len(s) > 32 {
		s = s[:32]
	}
	return strings.TrimRight(s, "-_")
}
