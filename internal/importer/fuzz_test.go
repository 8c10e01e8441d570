package importer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The fuzzers feed a dialect mutations of the fixtures and of small
// tricky inputs: Parse must never panic, must fail only with an *Error, and
// whatever it returns must be valid Plexus settings with valid secret
// names. One target per dialect, so that each gets its own time.

func FuzzParseClaude(f *testing.F)        { fuzzDialect(f, Claude) }
func FuzzParseClaudeDesktop(f *testing.F) { fuzzDialect(f, ClaudeDesktop) }
func FuzzParseCursor(f *testing.F)        { fuzzDialect(f, Cursor) }
func FuzzParseVSCode(f *testing.F)        { fuzzDialect(f, VSCode) }
func FuzzParseCodex(f *testing.F)         { fuzzDialect(f, Codex) }
func FuzzParseZed(f *testing.F)           { fuzzDialect(f, Zed) }
func FuzzParseGoose(f *testing.F)         { fuzzDialect(f, Goose) }
func FuzzParseMoltis(f *testing.F)        { fuzzDialect(f, Moltis) }
func FuzzParseClaudeProject(f *testing.F) { fuzzDialect(f, ClaudeProject) }
func FuzzParseGemini(f *testing.F)        { fuzzDialect(f, Gemini) }
func FuzzParseWindsurf(f *testing.F)      { fuzzDialect(f, Windsurf) }
func FuzzParseCline(f *testing.F)         { fuzzDialect(f, Cline) }
func FuzzParseOpencode(f *testing.F)      { fuzzDialect(f, Opencode) }
func FuzzParseContinue(f *testing.F)      { fuzzDialect(f, Continue) }

func fuzzDialect(f *testing.F, dialect string) {
	for _, fx := range fixtures {
		b, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b) // other dialects' files too: the wrong file must fail cleanly
	}
	{
		for _, s := range []string{
			"", "{}", "[]", "null", "{", `{"mcpServers": {"a": {"command": "x y 'z"}}}`,
			`{"mcpServers": {"a": {"url": "https://u:p@h/?key=v#f", "headers": {"Authorization": "Bearer $"}}}}`,
			`{"servers": {"a": {"url": "https://${input:x}/", "env": {"A": "${env:B}${input:c}"}}}}`,
			`{"context_servers": {"a": {"command": {"path": 1}}}}`,
			"[mcp_servers.a]\ncommand = \"x\"\nenv = { A = 1 }\n",
			"[mcp.servers.a]\nurl = \"http://h/?token=$$T\"\n[env]\nT = \"v\"\n",
			"extensions:\n  a: &x\n    cmd: y\n  b: *x\n",
			`{"mcp": {"a": {"type": "local", "command": ["x", 1], "environment": {"A": "{env:B}{file:c}"}}}}`,
			"mcpServers:\n  - name: a\n    url: http://h/${{ secrets.x }}\n  - 5\n  - name: a\n",
			`{"mcpServers": {"a": {"httpUrl": "https://h", "url": 3, "timeout": -1}}}`,
		} {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		res, err := Parse(dialect, content, func(n string) (string, bool) { return "", len(n)%2 == 0 })
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || res != nil {
				t.Fatalf("Parse = %v, %#v; want nil and an *Error", res, err)
			}
			return
		}
		checkResult(t, res)
		if _, err := Detect("x", content); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Detect: %#v is not an *Error", err)
			}
		}
	})
}
