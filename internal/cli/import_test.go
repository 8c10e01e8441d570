package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// importAnswer is a daemon's answer to a dry run of a Claude file.
const importAnswer = `{
  "dialect": "claude", "dryRun": true, "revision": 4,
  "entries": [
    {"source": "mcpServers.github", "original": "github", "name": "github", "action": "imported", "result": "added",
     "notes": ["env.GITHUB_TOKEN: value moved to the managed secret GITHUB_TOKEN"], "secrets": ["GITHUB_TOKEN"]},
    {"source": "mcpServers.linear", "original": "linear", "name": "linear", "action": "imported", "result": "conflict"},
    {"source": "mcpServers[\"my files\"]", "original": "my files", "name": "my-files", "action": "renamed",
     "reason": "a name holds only letters", "result": "unchanged", "notes": ["command: split"]},
    {"source": "mcpServers.tunnel", "original": "tunnel", "action": "skipped", "reason": "a WebSocket server"}
  ],
  "notes": ["1 server of Claude Code projects skipped"],
  "added": ["github"], "unchanged": ["my-files"], "conflicts": ["linear"],
  "secretsSet": ["GITHUB_TOKEN"], "secretsKept": [], "missing": ["SENTRY_TEAM"]
}`

// homeWith makes a home directory holding files (relative path → content)
// and makes it the user's.
func homeWith(t *testing.T, files map[string]string) string {
	t.Helper()
	home := shortTempDir(t)
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	return home
}

func TestImportReadsTheClientsFile(t *testing.T) {
	const file = `{"mcpServers": {"github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "s3cr3t"}}}}`
	home := homeWith(t, map[string]string{".claude.json": file})
	f := startFake(t, map[string]reply{"POST /v1/import": {200, importAnswer}})
	r := run(t, "", "import", "--dry-run", "claude")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sent apitype.ImportRequest
	if err := json.Unmarshal([]byte(f.bodyOf(t, "POST /v1/import")), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Dialect != "claude" || sent.Source != filepath.Join(home, ".claude.json") || sent.Content != file || !sent.DryRun {
		t.Fatalf("sent %+v", sent)
	}
	for _, want := range []string{
		"dry run: nothing was changed; importing " + filepath.Join(home, ".claude.json") + " (claude) would do this:\n",
		"would add github\n    env.GITHUB_TOKEN: value moved to the managed secret GITHUB_TOKEN\n",
		"conflict linear: a different server of that name exists; it would be kept, not overwritten\n",
		"unchanged my-files (renamed from \"my files\": a name holds only letters)\n",
		"would skip mcpServers.tunnel: a WebSocket server\n",
		"note: 1 server of Claude Code projects skipped\n",
		"secrets to move into the managed store (names only): GITHUB_TOKEN\n",
		"variables not set yet: SENTRY_TEAM\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "command: split") {
		t.Errorf("the notes of an unchanged server are shown:\n%s", r.stdout)
	}
	for _, want := range []string{"next:\n", "plexus secret set SENTRY_TEAM\n", "plexus import " + filepath.Join(home, ".claude.json") + " (without --dry-run)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestImportFile(t *testing.T) {
	homeWith(t, nil)
	dir := shortTempDir(t)
	path := filepath.Join(dir, "team.json")
	if err := os.WriteFile(path, []byte(`{"servers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := startFake(t, map[string]reply{"POST /v1/import": {200, `{"dialect":"vscode","revision":2,"entries":[],"added":[],"unchanged":[],"conflicts":[],"secretsSet":[],"secretsKept":[],"missing":[]}`}})
	r := run(t, "", "import", path)
	if r.code != 0 || !strings.Contains(r.stdout, "the file has no MCP servers") || !strings.Contains(r.stdout, "nothing changed (revision 2)") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sent apitype.ImportRequest
	json.Unmarshal([]byte(f.bodyOf(t, "POST /v1/import")), &sent)
	if sent.Dialect != "" || sent.Source != path || sent.DryRun {
		t.Fatalf("sent %+v: the daemon should guess the dialect of a file", sent)
	}

	r = run(t, "", "import", path, "--dialect", "cursor", "--json")
	json.Unmarshal([]byte(f.bodyOf(t, "POST /v1/import")), &sent)
	var res apitype.ImportResult
	if r.code != 0 || sent.Dialect != "cursor" || json.Unmarshal([]byte(r.stdout), &res) != nil || res.Revision != 2 {
		t.Fatalf("--json: exit %d, sent %+v\n%s%s", r.code, sent, r.stdout, r.stderr)
	}
}

func TestImportMistakes(t *testing.T) {
	home := homeWith(t, nil)
	f := startFake(t, map[string]reply{})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import"}, ExitUsage, "missing FILE or CLIENT"},
		{[]string{"import", "x.json", "--dialect", "emacs"}, ExitUsage, `unknown --dialect "emacs"`},
		{[]string{"import", "claude"}, ExitError, "no claude settings at " + filepath.Join(home, ".claude.json") + ": if they are elsewhere, give the file: plexus import FILE --dialect claude"},
		{[]string{"import", "codex"}, ExitError, filepath.Join(home, ".codex", "config.toml")},
		{[]string{"import", filepath.Join(home, "nope.json")}, ExitError, "no file " + filepath.Join(home, "nope.json")},
		{[]string{"import", home}, ExitError, "is a directory"},
	} {
		r := run(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if f.count() != 0 {
		t.Errorf("%d requests reached the daemon", f.count())
	}
}

func TestImportDaemonRefuses(t *testing.T) {
	homeWith(t, map[string]string{".cursor/mcp.json": `{"mcpServers": {"x": {"env": {"A": "s3cr3t"}}}}`})
	startFake(t, map[string]reply{"POST /v1/import": {409, `{"error":{"code":"conflict","message":"the managed secret X_A already holds a different value; nothing was imported","hint":"remove the old one with ` + "`plexus secret rm X_A`" + `"}}`}})
	r := run(t, "", "import", "cursor")
	if r.code != ExitError || !strings.Contains(r.stderr, "importing ") || !strings.Contains(r.stderr, "already holds a different value") ||
		!strings.Contains(r.stderr, "plexus secret rm X_A") || r.stdout != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

func TestExport(t *testing.T) {
	const text = "{\n  \"servers\": {}\n}\n"
	startFake(t, map[string]reply{"GET /v1/export?client=vscode": {200, `{"client":"vscode","path":".vscode/mcp.json","format":"json","text":` + jsonQuote(text) + `,"command":"code --add-mcp x","notes":["a note"]}`}})
	r := run(t, "", "export", "vscode")
	if r.code != 0 || r.stdout != text {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"merge this into .vscode/mcp.json:\n", "or run: code --add-mcp x\n", "note: a note\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r.stderr)
		}
	}
	r = run(t, "", "export", "vscode", "--json")
	var s apitype.ExportResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s.Text != text {
		t.Fatalf("--json: exit %d, %s", r.code, r.stdout)
	}
	if r := run(t, "", "export", "emacs"); r.code != ExitUsage || !strings.Contains(r.stderr, `unknown client "emacs"`) {
		t.Fatalf("unknown client: exit %d, %s", r.code, r.stderr)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
