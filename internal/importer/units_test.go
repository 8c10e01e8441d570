package importer

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
)

func parseOK(t *testing.T, dialect, content string) *Result {
	t.Helper()
	res, err := Parse(dialect, []byte(content), nil)
	if err != nil {
		t.Fatalf("Parse(%s): %v", dialect, err)
	}
	checkResult(t, res)
	return res
}

func TestImportNormalizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"github", "github"},
		{"my files", "my-files"},
		{"weather.local", "weather-local"},
		{"@scope/server", "scope-server"},
		{"_hidden", "hidden"},
		{"--", "server"},
		{"ünïcode", "n-code"},
		{strings.Repeat("a", 40), strings.Repeat("a", 32)},
		{"x" + strings.Repeat("-y", 20), "x" + strings.Repeat("-y", 15)},
	} {
		got, reason := normalizeName(tc.in)
		if got != tc.want || !validName(got) || (tc.in != tc.want) != (reason != "") {
			t.Errorf("normalizeName(%q) = %q, %q; want %q", tc.in, got, reason, tc.want)
		}
	}
}

func TestImportNameCollisions(t *testing.T) {
	res := parseOK(t, Claude, `{"mcpServers": {
		"a b": {"command": "x"}, "a-b": {"command": "x"}, "a.b": {"command": "x"},
		"`+strings.Repeat("n", 40)+`": {"command": "x"}, "`+strings.Repeat("n", 41)+`": {"command": "x"}}}`)
	got := slices.Sorted(maps.Keys(res.Servers))
	want := []string{"a-b", "a-b-2", "a-b-3", strings.Repeat("n", 32), strings.Repeat("n", 30) + "-2"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	for _, e := range res.Entries {
		if e.Original == "a-b" && e.Action != Imported {
			t.Errorf("a valid name lost to a renamed one: %+v", e)
		}
	}
}

func TestImportSecretNames(t *testing.T) {
	res := parseOK(t, Claude, `{"mcpServers": {
		"a": {"command": "x", "env": {"B_C_KEY": "one1"}},
		"a_b": {"command": "x", "env": {"C_KEY": "two2"}},
		"gh": {"command": "x", "env": {"GH_TOKEN": "three", "token": "four"}},
		"other": {"command": "x", "env": {"T": "${GH_TOKEN}"}},
		"9lives": {"command": "x", "env": {"KEY": "five"}}}}`)
	want := map[string]string{"A_B_C_KEY": "one1", "A_B_C_KEY_2": "two2", "GH_TOKEN_2": "three", "GH_TOKEN_3": "four", "_9LIVES_KEY": "five"}
	if !maps.Equal(res.Secrets, want) {
		t.Fatalf("secrets %v, want %v", res.Secrets, want)
	}
	if r := res.Servers["other"].Env["T"]; r.Env != "GH_TOKEN" {
		t.Fatalf("other's reference: %+v", r)
	}
}

func TestImportPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		syn  syntax
		in   string
		want []piece
	}{
		{syntax{braces: true}, "a${B}c$D", []piece{{litPiece, "a", false}, {envPiece, "B", false}, {litPiece, "c$D", false}}},
		{syntax{braces: true, bare: true}, "$D/${E}", []piece{{envPiece, "D", false}, {litPiece, "/", false}, {envPiece, "E", false}}},
		{syntax{braces: true, defaults: true}, "${A:-x y}", []piece{{envPiece, "A", true}}},
		{syntax{braces: true}, "${A:-x}", []piece{{litPiece, "${A:-x}", false}}},
		{syntax{envColon: true, input: true, editor: true, braces: true}, "${env:A}${input:my-key}${userHome}${config:x.y}${B}",
			[]piece{{envPiece, "A", false}, {inputPiece, "my-key", false}, {editorPiece, "userHome", false}, {editorPiece, "config:x.y", false}, {envPiece, "B", false}}},
		{syntax{braces: true}, "${unclosed", []piece{{litPiece, "${unclosed", false}}},
		{syntax{braces: true}, "$$ ${1X}", []piece{{litPiece, "$$ ${1X}", false}}},
	} {
		if got := tc.syn.split(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("split(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestImportValues(t *testing.T) {
	res := parseOK(t, Claude, `{"mcpServers": {
		"s": {"type": "http", "url": "https://h.example/p$x?Token=lit$$v&sig=${SIG}&q=plain&api-key=k%20v",
		      "headers": {"X-Mixed": "pre ${V} post$", "Authorization": "Basic dXNlcjpwYXNz"}},
		"m": {"command": "x", "env": {"DSN": "postgres://u:${PW}@h/db"}}}}`)
	s := res.Servers["s"]
	if s.URL != "https://h.example/p$$x?Token=${S_TOKEN}&sig=${SIG}&q=plain&api-key=${S_API_KEY}" {
		t.Errorf("url %s", s.URL)
	}
	if res.Secrets["S_TOKEN"] != "lit$$v" || res.Secrets["S_API_KEY"] != "k%20v" {
		t.Errorf("query secrets: %v", res.Secrets)
	}
	if v := s.Headers["X-Mixed"]; v.Text != "pre ${V} post$$" {
		t.Errorf("mixed header: %+v", v)
	}
	if v := s.Headers["Authorization"]; v.Env != "S_AUTHORIZATION" || res.Secrets["S_AUTHORIZATION"] != "Basic dXNlcjpwYXNz" {
		t.Errorf("authorization: %+v", v)
	}
	if r := res.Servers["m"].Env["DSN"]; r.Env != "M_DSN" || slices.Contains(slices.Collect(maps.Keys(res.Secrets)), "M_DSN") {
		t.Errorf("mixed env value: %+v (it cannot be composed: named, not stored)", r)
	}
	if !slices.Contains(res.Missing, "M_DSN") {
		t.Errorf("missing %v lacks M_DSN", res.Missing)
	}
	if err := config.Validate(&config.File{MCP: config.MCP{Servers: res.Servers}}); err != nil {
		t.Fatal(err)
	}
}

func TestImportSecretArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		i    int
		want bool
	}{
		{[]string{"--api-key", "abc"}, 1, true},
		{[]string{"--api-key=abc"}, 0, true},
		{[]string{"--github-token", "x"}, 1, true},
		{[]string{"--ssh-key", "/home/me/.ssh/id"}, 1, false},
		{[]string{"--key-file", "abc"}, 1, false},
		{[]string{"--monkey", "abc"}, 1, false},
		{[]string{"ghp_0123456789abcdefghij"}, 0, true},
		{[]string{"sk-learn"}, 0, false},
		{[]string{"mysql://root:pw@localhost/db"}, 0, true},
		{[]string{"https://example.com/path"}, 0, false},
		{[]string{"-y", "@modelcontextprotocol/server-github"}, 1, false},
	} {
		if got := secretArg(tc.args, tc.i) != ""; got != tc.want {
			t.Errorf("secretArg(%q, %d) = %v, want %v", tc.args, tc.i, got, tc.want)
		}
	}
}

func TestImportStripJSONC(t *testing.T) {
	in := "{\n // c \"x\"\n \"a\": \"//not/* a comment\", /* b\n c */ \"b\": [1, 2,],\n}"
	out := string(stripJSONC([]byte(in)))
	if len(out) != len(in) || strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Fatalf("offsets or lines moved:\n%s", out)
	}
	root, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if a := root.get("a"); a.text != "//not/* a comment" || a.line != 3 {
		t.Fatalf("a = %+v", a)
	}
	if b := root.get("b"); len(b.elems) != 2 || b.line != 4 {
		t.Fatalf("b = %+v", b)
	}
}

// TestErrorsQuoteNoValue checks that broken files give errors that locate
// the problem and never repeat what the file holds.
func TestImportErrorsQuoteNoValue(t *testing.T) {
	for _, tc := range []struct {
		dialect, content, want string
	}{
		{Claude, "{\n  \"mcpServers\": {\n    \"x\": \"CANARY\" \"y\"\n}", "claude: line 3: invalid JSON"},
		{Claude, `{"mcpServers": ["CANARY"]}`, "claude: mcpServers (line 1): want an object, not an array"},
		{Claude, `{"servers": {"x": {"command": "CANARY"}}}`, "claude: no mcpServers object: this looks like VS Code's mcp.json (--dialect vscode)"},
		{Codex, "[mcp_servers.x]\ncommand = \"CANARY\nargs = 1\n", "codex: line 2: invalid TOML"},
		{Codex, "[mcp_servers.x]\ncommand = 'CANARY' CANARY\n", "codex: line 2: invalid TOML"},
		{Goose, "extensions: [\"CANARY\"\n", "goose: line 1: invalid YAML"},
		{Goose, "a: `CANARY`", "goose: invalid YAML"},
		{VSCode, `{"servers": {}, "inputs": {"CANARY": 1}}`, "vscode: inputs (line 1): want an array, not an object"},
		{Moltis, "[mcp]\nservers = \"CANARY\"\n", "moltis: mcp.servers: want an object, not a string"},
		{Zed, "", "zed: the file is empty"},
	} {
		_, err := Parse(tc.dialect, []byte(tc.content), nil)
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s %q: %v; want it to start with %q and quote nothing", tc.dialect, tc.content, err, tc.want)
		}
	}
	// A wrong type in one entry skips that entry, with its path and line.
	res := parseOK(t, Claude, "{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"args\": \"CANARY\"},\n\"b\": {\"command\": \"y\"}}}")
	if e := res.Entries[0]; e.Action != Skipped || e.Reason != "mcpServers.a.args (line 2): want an array of strings, not a string" {
		t.Fatalf("entry a: %+v", e)
	}
	if len(res.Servers) != 1 {
		t.Fatalf("servers: %v", res.Servers)
	}
}

func TestImportDetect(t *testing.T) {
	for _, tc := range []struct{ source, content, want string }{
		{"/home/me/.claude.json", `{"mcpServers": {}}`, Claude},
		{"/home/me/project/.mcp.json", `{"mcpServers": {}}`, ClaudeProject},
		{"/home/me/.gemini/settings.json", `{"mcpServers": {}}`, Gemini},
		{"/home/me/.codeium/windsurf/mcp_config.json", `{"mcpServers": {}}`, Windsurf},
		{"/x/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", `{"mcpServers": {}}`, Cline},
		{"/home/me/.config/opencode/opencode.json", `{"mcp": {}}`, Opencode},
		{"conf.json", `{"$schema": "https://opencode.ai/config.json", "mcp": {}}`, Opencode},
		{"/home/me/.continue/config.yaml", "name: x\nmcpServers:\n  - name: a\n    command: b\n", Continue},
		{"/home/me/.cursor/mcp.json", `{"mcpServers": {}}`, Cursor},
		{"claude_desktop_config.json", `{"mcpServers": {}}`, ClaudeDesktop},
		{".vscode/mcp.json", "// c\n{\"servers\": {},}", VSCode},
		{"settings.json", `{"mcp": {"servers": {}}}`, VSCode},
		{"settings.json", `{"context_servers": {}}`, Zed},
		{"config.toml", "[mcp_servers.x]\ncommand = \"y\"\n", Codex},
		{"moltis.toml", "[mcp.servers.x]\ncommand = \"y\"\n", Moltis},
		{"config.yaml", "extensions: {}\n", Goose},
		{"mystery", "[mcp_servers.x]\ncommand = \"y\"\n", Codex},
		{"mystery", "extensions:\n  x:\n    cmd: y\n", Goose},
		{"", `{"mcpServers": {}}`, Claude},
		// Gemini CLI's settings copied to a file of another name: its
		// httpUrl key tells it.
		{"team-mcp.json", `{"mcpServers": {"docs": {"httpUrl": "https://docs.example/mcp"}}}`, Gemini},
	} {
		got, err := Detect(tc.source, []byte(tc.content))
		if err != nil || got != tc.want {
			t.Errorf("Detect(%q) = %q, %v; want %s", tc.source, got, err, tc.want)
		}
	}
	if _, err := Detect("notes.txt", []byte("hello")); err == nil || !strings.Contains(err.Error(), "--dialect") {
		t.Errorf("Detect(notes.txt) = %v", err)
	}
}

func TestImportVSCodeInputs(t *testing.T) {
	res := parseOK(t, VSCode, `{
		"inputs": [{"type": "promptString", "id": "api-key", "password": true}, {"type": "promptString", "id": "api_key"}],
		"servers": {"a": {"command": "x", "env": {"K": "${input:api-key}", "L": "${input:api_key}", "M": "${input:undeclared}"}}}}`)
	env := res.Servers["a"].Env
	if env["K"].Env != "API_KEY" || env["L"].Env != "API_KEY_2" || env["M"].Env != "UNDECLARED" {
		t.Fatalf("env %+v", env)
	}
	if len(res.Secrets) != 0 || !slices.Equal(res.Missing, []string{"API_KEY", "API_KEY_2", "UNDECLARED"}) {
		t.Fatalf("secrets %v, missing %v", res.Secrets, res.Missing)
	}
}

func TestImportMissingUsesEnv(t *testing.T) {
	content := []byte(`{"mcpServers": {"a": {"command": "x", "env": {"A": "${SET}", "B": "${UNSET}", "C": "lit"}}}}`)
	res, err := Parse(Claude, content, func(n string) (string, bool) { return "", n == "SET" })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Missing, []string{"UNSET"}) || !slices.Equal(res.Entries[0].Missing, []string{"UNSET"}) {
		t.Fatalf("missing %v / %v", res.Missing, res.Entries[0].Missing)
	}
}
