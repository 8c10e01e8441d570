package serverconf

import (
	"regexp"
	"testing"
)

func TestNameFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":        "example",
		"https://api.githubcopilot.com/mcp/": "githubcopilot",
		"https://mcp.linear.app/sse":         "linear",
		"http://127.0.0.1:8080/mcp":          "local",
		"http://localhost:3000":              "local",
		"https://docs.mcp.cloudflare.com":    "docs",
		"https://mcp.com":                    "mcp",
		"not a url":                          "",
		"https://":                           "",
		"https://Search_Engine.example.org/": "search_engine",
	} {
		if got := NameFromURL(in); got != want {
			t.Errorf("NameFromURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameFromArgv(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/my docs"}, "filesystem"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-github@2025.1.0"}, "github"},
		{[]string{"/usr/local/bin/docs-mcp", "--root", "/srv"}, "docs"},
		{[]string{"uvx", "mcp-server-git", "--repository", "."}, "git"},
		{[]string{"python3", "-m", "mcp_server_time"}, "time"},
		{[]string{"pnpm", "dlx", "@acme/weather-mcp"}, "weather"},
		{[]string{"docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server:latest"}, "github"},
		{[]string{"node", "build/index.js"}, "index"},
		{[]string{"npx"}, "npx"},
		{[]string{"plexus", "example-server"}, "plexus"},
		{nil, ""},
	} {
		if got := NameFromArgv(tc.argv); got != tc.want {
			t.Errorf("NameFromArgv(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestVarFor(t *testing.T) {
	for _, tc := range [][3]string{
		{"search", "token", "SEARCH_TOKEN"},
		{"my-docs", "X-Api-Key", "MY_DOCS_X_API_KEY"},
		{"9lives", "token", "MCP_9LIVES_TOKEN"},
	} {
		if got := VarFor(tc[0], tc[1]); got != tc[2] || !IsVarName(got) {
			t.Errorf("VarFor(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

var nameRule = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_-]{0,31})?$`)

// FuzzSuggestions: whatever a person types, a suggestion is a valid server
// name or empty.
func FuzzSuggestions(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com/mcp", "npx -y @a/server-b", "http://[::1]:80/", "-_-", "@/@", "é.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := NameFromURL(s); !nameRule.MatchString(got) {
			t.Fatalf("NameFromURL(%q) = %q", s, got)
		}
		if got := NameFromArgv([]string{s, s}); !nameRule.MatchString(got) {
			t.Fatalf("NameFromArgv(%q) = %q", s, got)
		}
		if got := NameFromArgv([]string{"npx", s}); !nameRule.MatchString(got) {
			t.Fatalf("NameFromArgv(npx %q) = %q", s, got)
		}
	})
}
