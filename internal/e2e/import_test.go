package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

const importCanary = "CANARY-7d41-imported-secret"

// TestImportClaudeFile imports a Claude Code ~/.claude.json through the real
// binary and daemon: a dry run changes nothing, the import adds the servers
// it can run (the example server comes up), moves the literal secrets to the
// managed store, and a second import changes nothing. No output and no
// settings file holds a secret value.
func TestImportClaudeFile(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	userHome := t.TempDir()
	e.ExtraEnv = []string{"HOME=" + userHome, "XDG_CONFIG_HOME="}
	e.StartDaemon()

	path := filepath.Join(userHome, ".claude.json")
	file := `{
  "numStartups": 3,
  "mcpServers": {
    "example": {
      "type": "stdio",
      "command": ` + strconv.Quote(e.Bin) + `,
      "args": ["example-server"],
      "env": {"EXAMPLE_TOKEN": "` + importCanary + `-env"}
    },
    "remote": {
      "type": "http",
      "url": "http://127.0.0.1:1/mcp?api_key=` + importCanary + `-query",
      "headers": {"Authorization": "Bearer ` + importCanary + `-bearer"}
    },
    "my tools": {"command": ` + strconv.Quote(e.Bin+" example-server") + `},
    "tunnel": {"type": "ws", "url": "wss://tunnel.example.com/mcp"}
  },
  "projects": {"/srv/app": {"mcpServers": {"db": {"command": "db-mcp", "env": {"PASSWORD": "` + importCanary + `-project"}}}}}
}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}

	var outputs []string
	run := func(args ...string) testenv.Result {
		t.Helper()
		r := e.Run("", args...)
		outputs = append(outputs, strings.Join(args, " ")+"\n"+r.Stdout+r.Stderr)
		if r.Code != 0 {
			t.Fatalf("plexus %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return r
	}

	// The client's name reads its usual file.
	r := run("import", "--dry-run", "claude")
	for _, want := range []string{"dry run: nothing was changed", "would add example", "would add remote",
		`would add my-tools (renamed from "my tools"`, "would skip mcpServers.tunnel: a WebSocket server",
		`would skip projects["/srv/app"].mcpServers.db`, "EXAMPLE_TOKEN, REMOTE_API_KEY, REMOTE_BEARER_TOKEN"} {
		mustContain(t, "import --dry-run", r.Stdout, want)
	}
	if len(servers(t, e)) != 0 || strings.TrimSpace(run("secret", "ls").Stdout) != "" {
		t.Fatal("the dry run changed something")
	}

	r = run("import", path)
	mustContain(t, "import", r.Stdout, "added example")
	mustContain(t, "import", r.Stdout, "secrets moved into the managed store (names only): EXAMPLE_TOKEN, REMOTE_API_KEY, REMOTE_BEARER_TOKEN")
	got := servers(t, e)
	for _, name := range []string{"example", "remote", "my-tools"} {
		if _, ok := got[name]; !ok {
			t.Errorf("plexus ls lacks %s: %v", name, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("plexus ls: %v", got)
	}
	st := waitState(t, e, "example", "ready", 30*time.Second)
	if !slices.Equal(st.EnvNames, []string{"EXAMPLE_TOKEN"}) {
		t.Errorf("example: %+v", st)
	}
	waitState(t, e, "my-tools", "ready", 30*time.Second)
	names := strings.Fields(run("secret", "ls").Stdout)
	if !slices.Equal(names, []string{"EXAMPLE_TOKEN", "REMOTE_API_KEY", "REMOTE_BEARER_TOKEN"}) {
		t.Errorf("secret ls: %v", names)
	}
	run("ls")
	run("ls", "--json")

	// Again: unchanged, and no new revision.
	r = run("import", path)
	mustContain(t, "second import", r.Stdout, "unchanged example")
	mustContain(t, "second import", r.Stdout, "nothing changed (revision 1)")
	run("import", "claude", "--json")

	e.StopDaemon()
	settings, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "extensions.json", string(settings), `"bearerTokenEnvVar": "REMOTE_BEARER_TOKEN"`)
	outputs = append(outputs, "extensions.json\n"+string(settings))
	if logs, err := os.ReadFile(filepath.Join(e.Home, "logs.jsonl")); err == nil {
		outputs = append(outputs, "logs.jsonl\n"+string(logs))
	}
	outputs = append(outputs, "daemon output\n"+e.DaemonOutput())
	for _, o := range outputs {
		if strings.Contains(o, importCanary) {
			t.Errorf("a secret value leaked in:\n%s", o)
		}
	}
	creds, _ := os.ReadFile(filepath.Join(e.Home, "creds.json"))
	if !strings.Contains(string(creds), importCanary+"-bearer") || strings.Contains(string(creds), importCanary+"-project") {
		t.Error("creds.json does not hold exactly the imported secrets")
	}
}

// TestExportSnippet prints the snippets through the real binary.
func TestExportSnippet(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	r := e.Run("", "export", "codex")
	if r.Code != 0 || r.Stdout != "[mcp_servers.plexus]\ncommand = \"plexus\"\nargs = [\"mcp\"]\n" ||
		!strings.Contains(r.Stderr, "~/.codex/config.toml") || !strings.Contains(r.Stderr, "codex mcp add plexus -- plexus mcp") {
		t.Fatalf("export codex: %+v", r)
	}
	r = e.Run("", "export", "vscode", "--full-path")
	if r.Code != 0 || !strings.Contains(r.Stdout, strconv.Quote(e.Bin)) {
		t.Fatalf("export vscode --full-path: %+v", r)
	}
}
