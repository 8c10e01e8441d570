package cli

import (
	"strings"
	"testing"
)

const twoTools = `{"tools": [
	{"name": "mcp_example_echo_x4jqblwe", "server": "example", "tool": "echo", "description": "Echo the text\nback", "kind": "tool", "inputSchema": {}},
	{"name": "mcp_example_sha256_a1b2c3d4", "server": "example", "tool": "sha256", "description": "Hash", "kind": "tool", "inputSchema": {}}]}`

// TestCallDidYouMean: a tool called by its own name is pointed to its
// Plexus name, once.
func TestCallDidYouMean(t *testing.T) {
	startFake(t, map[string]reply{
		"POST /v1/call": {404, `{"error": {"code": "not_found", "message": "no tool echo"}}`},
		"GET /v1/tools": {200, twoTools},
	})
	r := run(t, "", "call", "echo")
	want := "did you mean `mcp_example_echo_x4jqblwe`?"
	if r.code != ExitError || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "no tool echo") != 1 {
		t.Errorf("call echo: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "", "call", "nothing_like_it")
	if r.code != ExitError || strings.Contains(r.stderr, "did you mean") || !strings.Contains(r.stderr, "see `plexus tools`") {
		t.Errorf("call nothing_like_it: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestAddURLAfterDash: a URL where a command belongs gets a hint that
// says where it goes.
func TestAddURLAfterDash(t *testing.T) {
	r := run(t, "", "add", "docs", "--", "https://mcp.example.com/mcp")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "after -- comes a command: give the URL before it, plexus add NAME https://mcp.example.com/mcp") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCompletion completes server names, tool names and secret names from
// the daemon through cobra's __complete, as a shell's script calls it.
func TestCompletion(t *testing.T) {
	startFake(t, map[string]reply{
		"GET /v1/servers": {200, serversJSON},
		"GET /v1/tools":   {200, twoTools},
		"GET /v1/secrets": {200, `{"revision": 1, "names": ["DOCS_TOKEN", "SEARCH_KEY"]}`},
	})
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "restart", ""}, []string{"docs", "search", "old"}},
		{[]string{"__complete", "edit", "s"}, []string{"search"}},
		{[]string{"__complete", "tools", "--server", "d"}, []string{"docs"}},
		{[]string{"__complete", "call", "mcp_example_e"}, []string{"mcp_example_echo_x4jqblwe\tEcho the text"}},
		{[]string{"__complete", "secret", "rm", "S"}, []string{"SEARCH_KEY"}},
		{[]string{"__complete", "restart", "docs", ""}, nil},
	} {
		r := run(t, "", tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		// The last line is cobra's directive (":4", no file completion).
		got := lines[:len(lines)-1]
		if r.code != 0 || strings.Join(got, "|") != strings.Join(tc.want, "|") || lines[len(lines)-1] != ":4" {
			t.Errorf("%v: exit %d, got %q, want %q; stderr %s", tc.args, r.code, got, tc.want, r.stderr)
		}
	}
}

// TestNearestServer: a typo of a server's name finds it; a name far from
// every server finds none.
func TestNearestServer(t *testing.T) {
	names := []string{"filesystem", "github", "memory", "linear"}
	for typed, want := range map[string]string{"gitub": "github", "GitHub": "github", "file": "filesystem", "memroy": "memory", "postgres": "", "x": ""} {
		if got := nearest(typed, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", typed, got, want)
		}
	}
}
