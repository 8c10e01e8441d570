package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// specExample is the example of R-CFG (docs/requirements.md).
const specExample = `{
  "mcp": {
    "enabled": true,
    "retryMs": 30000,
    "callTimeoutMs": 60000,
    "servers": {
      "docs": {
        "type": "stdio",
        "command": "/usr/local/bin/docs-mcp",
        "args": ["--root", "/srv/docs"],
        "cwd": "/srv/docs",
        "env": { "DOCS_TOKEN": { "env": "MY_DOCS_TOKEN" } }
      },
      "search": {
        "type": "http",
        "url": "https://mcp.example.com/mcp?team=${TEAM}",
        "headers": { "X-Api-Key": { "env": "SEARCH_KEY" } },
        "bearerTokenEnvVar": "MY_SEARCH_TOKEN",
        "enabledTools": ["search"],
        "callTimeoutMs": 30000
      }
    }
  }
}`

func TestDecodeSpecExample(t *testing.T) {
	f, err := Decode([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := &File{MCP: MCP{
		Enabled: &yes, RetryMs: 30000, CallTimeoutMs: 60000,
		Servers: map[string]Server{
			"docs": {
				Type: TypeStdio, Command: "/usr/local/bin/docs-mcp", Args: []string{"--root", "/srv/docs"},
				Cwd: "/srv/docs", Env: map[string]Ref{"DOCS_TOKEN": {Env: "MY_DOCS_TOKEN"}},
			},
			"search": {
				Type: TypeHTTP, URL: "https://mcp.example.com/mcp?team=${TEAM}",
				Headers:           map[string]Value{"X-Api-Key": {Env: "SEARCH_KEY"}},
				BearerTokenEnvVar: "MY_SEARCH_TOKEN", EnabledTools: []string{"search"}, CallTimeoutMs: 30000,
			},
		},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("Decode(spec example) =\n%+v\nwant\n%+v", f, want)
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, in := range []string{"", " \n\t", "{}", "\uFEFF{}", `{"mcp": {}}`, `{"mcp": {"servers": {}}}`} {
		f, err := Decode([]byte(in))
		if err != nil || !reflect.DeepEqual(f, &File{}) {
			t.Errorf("Decode(%q) = %+v, %v; want an empty File", in, f, err)
		}
	}
}

// problemsOf decodes in and returns its problems, failing if it decodes.
func problemsOf(t *testing.T, in string) []Problem {
	t.Helper()
	f, err := Decode([]byte(in))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Decode(%s) = %+v, %v; want *Error", in, f, err)
	}
	if f != nil {
		t.Errorf("Decode(%s) returned a File with an error", in)
	}
	return e.Problems
}

// wantProblem fails unless ps has one at path whose message contains msg.
func wantProblem(t *testing.T, in string, ps []Problem, path, msg string) {
	t.Helper()
	for _, p := range ps {
		if p.Path == path && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("Decode(%s):\n%s\nwant %s: ...%s...", in, (&Error{ps}).Error(), path, msg)
}

// server wraps the JSON of one server named x into a whole file.
func server(body string) string { return `{"mcp": {"servers": {"x": ` + body + `}}}` }

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in, path, msg string
	}{
		{`{"colour": 1}`, "colour", "unknown key"},
		{`{"mcp": {"retryms": 1}}`, "mcp.retryms", `unknown key (did you mean "retryMs"?)`},
		{`{"mcp": {"face": {"allow_write": true}}}`, "mcp.face.allow_write", `did you mean "allowWrite"?`},
		{`{"mcpServers": {}}`, "mcpServers", `servers go under "mcp.servers"`},
		{server(`{"type": "stdio", "command": "c", "colour": "red"}`), "mcp.servers.x.colour", "unknown key"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {"env": "B", "default": "x"}}}`), "mcp.servers.x.env.A.default", "unknown key"},
		{`{"mcp": {"profiles": {"p": {"servers": [], "x": 1}}}}`, "mcp.profiles.p.x", "unknown key"},
		{`{"mcp": {}, "mcp": {}}`, "mcp", "duplicate key"},
		{server(`{"type": "stdio", "type": "http", "command": "c"}`), "mcp.servers.x.type", "duplicate key"},
		{`{"mcp": {"retryMs": "5"}}`, "mcp.retryMs", "want a number, got string"},
		{`{"mcp": {"retryMs": 1.5}}`, "mcp.retryMs", "want an integer, got 1.5"},
		{`{"mcp": {"retryMs": 1e3}}`, "mcp.retryMs", "want an integer, got 1e3"},
		{`{"mcp": {"retryMs": 99999999999999999999}}`, "mcp.retryMs", "number out of range"},
		{`{"revision": "1"}`, "revision", "want a number, got string"},
		{`{"mcp": {"enabled": "yes"}}`, "mcp.enabled", "want true or false, got string"},
		{`{"mcp": {"enabled": null}}`, "mcp.enabled", "want true or false, got null"},
		{`{"mcp": []}`, "mcp", "want an object, got array"},
		{`{"mcp": {"servers": []}}`, "mcp.servers", "want an object, got array"},
		{`{"mcp": {"servers": {"x": "stdio"}}}`, "mcp.servers.x", "want an object, got string"},
		{server(`{"type": 1}`), "mcp.servers.x.type", "want a string, got number"},
		{server(`{"type": "stdio", "command": "c", "args": "a b"}`), "mcp.servers.x.args", "want an array of strings, got string"},
		{server(`{"type": "stdio", "command": "c", "args": ["a", 2]}`), "mcp.servers.x.args[1]", "want a string, got number"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": "sk-live-123"}}`), "mcp.servers.x.env.A", `want {"env": "VAR"}, got string: secrets are named`},
		{server(`{"type": "stdio", "command": "c", "env": {"A": 5}}`), "mcp.servers.x.env.A", `want {"env": "VAR"}, got number`},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {}}}`), "mcp.servers.x.env.A.env", "is required"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {"env": "B", "value": "1"}}}`), "mcp.servers.x.env.A", "has both env and value"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {"value": 1}}}`), "mcp.servers.x.env.A.value", "want a string, got number"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {"value": "a\u0000b"}}}`), "mcp.servers.x.env.A.value", "contains a NUL byte"},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": {"value": "1"}}}`), "mcp.servers.x.headers.A.value", "unknown key"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"clientSecret": {"value": "s3cr3t"}}}`), "mcp.servers.x.oauth.clientSecret.value", "unknown key"},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": 5}}`), "mcp.servers.x.headers.A", `want a string or {"env": "VAR"}, got number`},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": {}}}`), "mcp.servers.x.headers.A.env", "is required"},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": {"env": ""}}}`), "mcp.servers.x.headers.A.env", "is required"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"clientSecret": "s3cr3t"}}`), "mcp.servers.x.oauth.clientSecret", "secrets are named"},
		{server(`{"type": "stdio", "command": "c", "maxResultBytes": -1.5}`), "mcp.servers.x.maxResultBytes", "want an integer"},
		{`{"mcp": {"servers": {"a.b": {}}}}`, `mcp.servers["a.b"]`, "is not a valid name"},
		{`[]`, "", "the top-level value must be an object, got array"},
		{`null`, "", "the top-level value must be an object, got null"},
	}
	for _, tt := range tests {
		wantProblem(t, tt.in, problemsOf(t, tt.in), tt.path, tt.msg)
	}
}

func TestDecodeSyntax(t *testing.T) {
	tests := []struct{ in, msg string }{
		{`{"a" 1}`, "invalid JSON at line 1, column 6: invalid character '1' after object key"},
		{"{\n  \"mcp\": x}", "invalid JSON at line 2, column 10: invalid character 'x'"},
		{`{"mcp": {}`, "invalid JSON at line 1, column 11: unexpected end of input"},
		{`{"mcp": {},}`, "invalid JSON at line 1, column 12: invalid character '}'"},
		{`{"mcp": "abc`, "unexpected end of input"},
		{`{} x`, "invalid JSON at line 1, column 4: trailing data after the top-level value"},
		{"{}\n{}", "invalid JSON at line 2, column 1: trailing data after the top-level value"},
		{`{"a": tru}`, "invalid JSON at line 1, column 10: invalid character '}' in literal true"},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), "nested more than 64 levels deep"},
	}
	for _, tt := range tests {
		ps := problemsOf(t, tt.in)
		if len(ps) != 1 || ps[0].Path != "" || !strings.Contains(ps[0].Message, tt.msg) {
			t.Errorf("Decode(%q) = %v; want one problem containing %q", tt.in, ps, tt.msg)
		}
	}
}

// TestDecodeAllProblems checks that one pass finds every kind of problem,
// from decoding and validation alike, sorted by path.
func TestDecodeAllProblems(t *testing.T) {
	in := `{
  "mcp": {
    "retryMs": "soon",
    "servers": {
      "docs": {"type": "stdio", "command": "d", "colour": "blue"},
      "bad name": {"type": "stdio", "command": "d"},
      "web": {"type": "http", "url": "https://user:pw@example.com/mcp"},
      "web2": {"type": "ftp"}
    },
    "profiles": {"p": {"servers": ["nope"]}}
  }
}`
	err := func() error { _, err := Decode([]byte(in)); return err }()
	want := []string{
		"mcp.profiles.p.servers[0]: unknown server \"nope\"",
		"mcp.retryMs: want a number, got string",
		"mcp.servers.docs.colour: unknown key",
		"mcp.servers.web.url: userinfo is not allowed",
		"mcp.servers.web2.type: unknown type \"ftp\"",
		"mcp.servers[\"bad name\"]: is not a valid name",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("Decode reported %d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("problem %d = %q, want %q...", i, lines[i], want[i])
		}
	}
	if strings.Contains(err.Error(), "pw") {
		t.Errorf("error echoes the URL's password:\n%v", err)
	}
}

// TestDecodeNoDoubleReport checks that a value that failed to decode is not
// reported again by validation.
func TestDecodeNoDoubleReport(t *testing.T) {
	in := server(`{"type": 7, "url": ["x"]}`)
	ps := problemsOf(t, in)
	if len(ps) != 2 {
		t.Errorf("Decode(%s) =\n%v\nwant only the two type errors", in, &Error{ps})
	}
}
