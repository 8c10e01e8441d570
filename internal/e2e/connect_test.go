package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// clientHome is a user's home for `plexus connect`, holding the file of
// client copied from clientconf's fixtures (with canary secrets planted).
type clientHome struct {
	dir string
	env []string
}

func newClientHome(t *testing.T, e *testenv.Env) *clientHome {
	t.Helper()
	h := &clientHome{dir: t.TempDir()}
	h.env = []string{"HOME=" + h.dir, "XDG_CONFIG_HOME=" + filepath.Join(h.dir, ".config"),
		"CODEX_HOME=" + filepath.Join(h.dir, ".codex"), "CLAUDE_CONFIG_DIR=" + filepath.Join(h.dir, ".claude")}
	e.ExtraEnv = append(e.ExtraEnv, h.env...)
	return h
}

// clientFiles are where each client's user settings are under a home set
// up by newClientHome.
var clientFiles = map[string]string{
	"claude":         ".claude/.claude.json",
	"claude-desktop": ".config/Claude/claude_desktop_config.json",
	"codex":          ".codex/config.toml",
	"cursor":         ".cursor/mcp.json",
	"gemini":         ".gemini/settings.json",
	"goose":          ".config/goose/config.yaml",
	"opencode":       ".config/opencode/opencode.json",
	"vscode":         ".config/Code/User/mcp.json",
	"windsurf":       ".codeium/windsurf/mcp_config.json",
	"zed":            ".config/zed/settings.json",
}

// TestConnectEveryClient: for every client, `plexus connect --dry-run`
// writes nothing; `plexus connect` writes the entry into the client's own
// file with a backup, prints a diff in which none of the user's planted
// secrets appear, and, without a terminal or --yes, leaves external calls
// off and says so; `plexus disconnect` gives the file back byte for byte.
// `--yes` switches external calls on.
func TestConnectEveryClient(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	h := newClientHome(t, e)
	e.StartDaemon()
	for client, rel := range clientFiles {
		before, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "clientconf", "testdata", client+".before"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(h.dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, before, 0o600); err != nil {
			t.Fatal(err)
		}
		r := e.Run("", "connect", client, "--dry-run")
		if r.Code != 0 || !strings.Contains(r.Stdout, "+++ "+path) || !strings.Contains(r.Stdout, e.Bin) {
			t.Fatalf("%s --dry-run: %+v", client, r)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
			t.Fatalf("%s: --dry-run wrote the file", client)
		}
		r = e.Run("", "connect", client)
		if r.Code != 0 {
			t.Fatalf("%s: %+v", client, r)
		}
		if strings.Contains(r.Stdout+r.Stderr, "CANARY") {
			t.Errorf("%s: connect printed a secret of the user's:\n%s\n%s", client, r.Stdout, r.Stderr)
		}
		mustContain(t, client+" connect", r.Stderr, "plexus settings set face.allowExternalCall true")
		after, _ := os.ReadFile(path)
		if !bytes.Contains(after, []byte(e.Bin)) || !bytes.Contains(after, []byte("CANARY")) {
			t.Errorf("%s: the file after connect:\n%s", client, after)
		}
		backups, _ := filepath.Glob(path + ".plexus-backup-*")
		if len(backups) != 1 {
			t.Fatalf("%s: backups %v", client, backups)
		}
		if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, before) {
			t.Errorf("%s: the backup is not the file before", client)
		}
		if r := e.Run("", "connect", client); r.Code != 0 || !strings.Contains(r.Stdout, "already runs Plexus") {
			t.Errorf("%s: connecting again: %+v", client, r)
		}
		// At once, likely in the same second of the clock: the disconnect's
		// backup is a second one, and the first is still the file before.
		if r := e.Run("", "disconnect", client); r.Code != 0 || strings.Contains(r.Stdout+r.Stderr, "CANARY") {
			t.Fatalf("%s disconnect: %+v", client, r)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
			t.Errorf("%s: after disconnect:\n%s\nwant:\n%s", client, got, before)
		}
		if all, _ := filepath.Glob(path + ".plexus-backup-*"); len(all) != 2 {
			t.Errorf("%s: backups after disconnect %v, want two", client, all)
		}
		if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, before) {
			t.Errorf("%s: the first backup is no longer the file before", client)
		}
	}
	if got := strings.TrimSpace(e.MustRun("settings", "get", "face.allowExternalCall")); got != "false" {
		t.Fatalf("external calls switched on without consent: %s", got)
	}
	r := e.Run("", "connect", "cursor", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stderr, "external calls are on") {
		t.Fatalf("connect --yes: %+v", r)
	}
	if got := strings.TrimSpace(e.MustRun("settings", "get", "face.allowExternalCall")); got != "true" {
		t.Fatalf("connect --yes left external calls %s", got)
	}
	// Bad input: a file the client could not read is left as it is.
	bad := filepath.Join(h.dir, clientFiles["zed"])
	if err := os.WriteFile(bad, []byte(`{"context_servers": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("", "connect", "zed"); r.Code != 1 || !strings.Contains(r.Stderr, bad) {
		t.Errorf("a broken file: %+v", r)
	}
	if got, _ := os.ReadFile(bad); string(got) != `{"context_servers": {` {
		t.Errorf("a broken file was changed: %q", got)
	}
	if r := e.Run("", "connect", "notepad"); r.Code != 2 || !strings.Contains(r.Stderr, "claude") {
		t.Errorf("an unknown client: %+v", r)
	}
}

// TestConnectRealClients: the real Claude Code, Gemini CLI and Codex CLI
// from npm, with a home of their own, list Plexus as connected (Claude,
// Gemini: they start `plexus mcp` and initialize it) or enabled (Codex)
// after `plexus connect`, and no longer after `plexus disconnect`. None of
// them needs an account to list its MCP servers.
func TestConnectRealClients(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npm is not installed (CI installs it)")
	}
	modules := testenv.NPMInstall(t, filepath.Join(testenv.RepoRoot(), "internal", "testenv", "clients"), "clients")
	bin := filepath.Join(modules, ".bin")
	// The packages are installed without their install scripts; Claude
	// Code's would copy its native binary over bin/claude.exe, and its
	// wrapper finds and runs that binary instead.
	commands := map[string][]string{
		"claude": {"node", filepath.Join(modules, "@anthropic-ai", "claude-code", "cli-wrapper.cjs")},
		"gemini": {filepath.Join(bin, "gemini")},
		"codex":  {filepath.Join(bin, "codex")},
	}
	e := testenv.New(t)
	h := newClientHome(t, e)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	project := filepath.Join(h.dir, "project")
	if err := os.MkdirAll(filepath.Join(h.dir, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	// Gemini CLI runs no MCP server in a folder the user has not trusted:
	// the user's own step, not Plexus's.
	if err := os.WriteFile(filepath.Join(h.dir, ".gemini", "trustedFolders.json"), []byte(`{"`+project+`": "TRUST_FOLDER"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(client string) string {
		t.Helper()
		argv := append(commands[client], "mcp", "list")
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = project
		// TMPDIR: Claude Code keeps a folder per project in the temporary
		// folder (claude-UID), which would outlive the test.
		cmd.Env = append(os.Environ(), append(h.env, "PLEXUS_HOME="+e.Home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"NO_COLOR=1", "CI=1", "TMPDIR="+t.TempDir())...)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = testenv.CombinedOutput(t, cmd); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s mcp list did not finish in 2 minutes:\n%s", client, out)
		}
		if err != nil {
			t.Fatalf("%s mcp list: %v\n%s", client, err, out)
		}
		return string(out)
	}
	for _, tc := range []struct{ client, cli, want string }{
		{"claude", "claude", "Connected"},
		{"gemini", "gemini", "Connected"},
		{"codex", "codex", "enabled"},
	} {
		e.MustRun("connect", tc.client, "--yes")
		out := list(tc.cli)
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "plexus") && strings.Contains(line, e.Bin) && strings.Contains(line, tc.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s mcp list after plexus connect does not show plexus %s:\n%s", tc.cli, tc.want, out)
		}
		e.MustRun("disconnect", tc.client)
		if out := list(tc.cli); strings.Contains(out, e.Bin) {
			t.Errorf("%s mcp list after plexus disconnect:\n%s", tc.cli, out)
		}
	}
}
