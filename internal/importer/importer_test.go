package importer

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtures are realistic files of every dialect, each with literal secrets
// (every one holds the word CANARY) and placeholders.
var fixtures = []struct {
	dialect, file string
}{
	{Claude, "claude.json"},
	{ClaudeDesktop, "claude-desktop.json"},
	{Cursor, "cursor.json"},
	{VSCode, "vscode.json"},
	{Codex, "codex.toml"},
	{Zed, "zed.json"},
	{Goose, "goose.yaml"},
	{Moltis, "moltis.toml"},
	{ClaudeProject, "claude-project.json"},
	{Gemini, "gemini.json"},
	{Windsurf, "windsurf.json"},
	{Cline, "cline.json"},
	{Opencode, "opencode.json"},
	{Continue, "continue.yaml"},
}

// fixtureDir is where the golden test pretends the fixtures are.
const fixtureDir = "/home/me/proj"

// testEnv is the environment the tests pretend the daemon has.
func testEnv(name string) (string, bool) {
	switch name {
	case "LINEAR_API_KEY", "FIGMA_OAUTH_TOKEN", "CHROME_PATH":
		return "", true
	}
	return "", false
}

// render is the golden form of a result: the servers as extensions.json
// would hold them, the report, and the names (never the values) of the
// secrets.
func render(t *testing.T, res *Result) string {
	t.Helper()
	var b strings.Builder
	data, err := config.Encode(&config.File{MCP: config.MCP{Servers: res.Servers}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "# dialect\n%s\n\n# servers\n%s\n# report\n", res.Dialect, data)
	b.WriteString(report(res))
	b.WriteString("\n# secrets (names only)\n")
	for _, n := range slices.Sorted(maps.Keys(res.Secrets)) {
		b.WriteString(n + "\n")
	}
	b.WriteString("\n# missing\n")
	for _, n := range res.Missing {
		b.WriteString(n + "\n")
	}
	return b.String()
}

// line is an entry's one-line summary in the golden reports, e.g.
// "imported github" or `renamed "my server" to my-server (...)`.
func line(e Entry) string {
	switch e.Action {
	case Renamed:
		return fmt.Sprintf("renamed %q to %s (%s)", e.Original, e.Name, e.Reason)
	case Skipped:
		return fmt.Sprintf("skipped %s: %s", e.Source, e.Reason)
	}
	return "imported " + e.Name
}

func report(res *Result) string {
	var b strings.Builder
	for _, e := range res.Entries {
		b.WriteString(line(e) + "\n")
		for _, n := range e.Notes {
			b.WriteString("    " + n + "\n")
		}
		if len(e.Secrets) > 0 {
			b.WriteString("    secrets: " + strings.Join(e.Secrets, ", ") + "\n")
		}
		if len(e.Missing) > 0 {
			b.WriteString("    missing: " + strings.Join(e.Missing, ", ") + "\n")
		}
	}
	for _, n := range res.Notes {
		b.WriteString("note: " + n + "\n")
	}
	return b.String()
}

// TestImportGolden keeps each dialect's result reviewed: the servers, the
// report and the secret names of every fixture are in testdata/*.golden.
// Run `go test ./internal/importer -run Golden -update` to accept a change.
func TestImportGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.dialect, func(t *testing.T) {
			content, err := os.ReadFile(filepath.Join("testdata", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := ParseIn(fx.dialect, content, fixtureDir, testEnv)
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, res)
			golden := filepath.Join("testdata", fx.dialect+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("result differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
			}
			checkResult(t, res)
			// Parsing is deterministic.
			again, _ := ParseIn(fx.dialect, content, fixtureDir, testEnv)
			if render(t, again) != got {
				t.Error("a second Parse of the same file differs")
			}
			// The dialect is recognized from the file.
			name := map[string]string{Claude: ".claude.json", ClaudeDesktop: "claude_desktop_config.json",
				Cursor: "/home/me/.cursor/mcp.json", VSCode: ".vscode/mcp.json", Codex: "config.toml",
				Zed: "settings.json", Goose: "config.yaml", Moltis: "moltis.toml",
				ClaudeProject: "/home/me/proj/.mcp.json", Gemini: "/home/me/.gemini/settings.json",
				Windsurf: "/home/me/.codeium/windsurf/mcp_config.json", Cline: "cline_mcp_settings.json",
				Opencode: "opencode.json", Continue: "/home/me/.continue/config.yaml"}[fx.dialect]
			if d, err := Detect(name, content); err != nil || d != fx.dialect {
				t.Errorf("Detect(%s) = %q, %v; want %s", name, d, err, fx.dialect)
			}
		})
	}
}

// TestNoSecretInOutput checks that no literal secret of the fixtures
// reaches the servers or the report: each is only in Secrets.
func TestImportNoSecretInOutput(t *testing.T) {
	for _, fx := range fixtures {
		content, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(content), "CANARY") {
			t.Fatalf("%s: the fixture has no CANARY secret", fx.file)
		}
		res, err := Parse(fx.dialect, content, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		servers, _ := config.Encode(&config.File{MCP: config.MCP{Servers: res.Servers}})
		out := string(servers) + report(res) + strings.Join(res.Missing, " ")
		if strings.Contains(out, "CANARY") {
			t.Errorf("%s: a CANARY value leaked:\n%s", fx.file, out)
		}
		moved := 0
		for name, v := range res.Secrets {
			if strings.Contains(v, "CANARY") {
				moved++
			}
			if len(v) >= 8 && strings.Contains(out, v) {
				t.Errorf("%s: the value of %s appears in the output", fx.file, name)
			}
		}
		if moved == 0 {
			t.Errorf("%s: no CANARY value was moved to a managed secret", fx.file)
		}
	}
}

// checkResult holds what every result must: valid servers that refer to
// their secrets by name only, valid secret names, entries in order.
func checkResult(t *testing.T, res *Result) {
	t.Helper()
	f := &config.File{MCP: config.MCP{Servers: res.Servers}}
	if err := config.Validate(f); err != nil {
		t.Fatalf("the servers do not validate: %v", err)
	}
	for name := range res.Secrets {
		if !config.ValidVarName(name) {
			t.Errorf("secret name %q is not a variable name", name)
		}
	}
	imported := 0
	for i, e := range res.Entries {
		if i > 0 && res.Entries[i-1].Source > e.Source {
			t.Errorf("entries out of order: %s before %s", res.Entries[i-1].Source, e.Source)
		}
		switch e.Action {
		case Imported, Renamed:
			imported++
			if _, ok := res.Servers[e.Name]; !ok {
				t.Errorf("entry %s: server %q missing", e.Source, e.Name)
			}
		case Skipped:
			if e.Reason == "" || e.Name != "" {
				t.Errorf("entry %s: skipped without a reason, or with a name", e.Source)
			}
		default:
			t.Errorf("entry %s: action %q", e.Source, e.Action)
		}
	}
	if imported != len(res.Servers) {
		t.Errorf("%d entries imported, %d servers", imported, len(res.Servers))
	}
}

// Parse is ParseIn for content that is in no folder.
func Parse(dialectName string, content []byte, env func(string) (string, bool)) (*Result, error) {
	return ParseIn(dialectName, content, "", env)
}
