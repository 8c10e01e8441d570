package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestREADMEQuickstartAsWritten runs the commands of the README's
// Quickstart block line by line in a shell, as written — the tool name
// printed there, the npm server from a command line, the secret read from
// stdin — with the stand-ins a test needs: the filesystem servers' folders
// are ones the test makes (~/notes one of its own, not the home's), and the
// remote server is a local one that answers only requests carrying the
// secret.
func TestREADMEQuickstartAsWritten(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npx is missing (CI installs it)")
	}
	const secret = "canary-readme-4b8e-do-not-leak"
	lines := quickstartLines(t)

	docs := filepath.Join(t.TempDir(), "my docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	remote := testenv.KeyedServer(t, func(r *http.Request) bool { return r.Header.Get("X-Api-Key") == secret })
	notes := filepath.Join(t.TempDir(), "notes")
	stand := strings.NewReplacer("/srv/my docs", docs, "https://mcp.example.com/mcp", remote, "~/notes", notes)

	e := testenv.New(t)
	e.StartDaemon()
	var outputs []string
	for _, line := range lines {
		if strings.HasPrefix(line, "go install ") {
			continue // the test's binary is on PATH already
		}
		stdin := ""
		if strings.Contains(line, "secret set") {
			stdin = secret + "\n"
		}
		r := e.Shell(stdin, stand.Replace(line))
		outputs = append(outputs, r.Stdout, r.Stderr)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.Code, r.Stdout, r.Stderr)
		}
		switch {
		case strings.Contains(line, " call "):
			mustContain(t, line, r.Stdout, "hello")
		case strings.Contains(line, "resources read"):
			mustContain(t, line, r.Stdout, "example")
		case strings.Contains(line, "prompts get"):
			mustContain(t, line, r.Stdout, "a long text")
		}
	}

	st := servers(t, e)
	for _, name := range []string{"example", "fs", "search"} {
		if s, ok := st[name]; !ok || s.State != "ready" || s.Tools == 0 {
			t.Errorf("%s after the Quickstart: %+v", name, s)
		}
	}
	toolNamed(t, tools(t, e, "--server", "search"), "search", "whoami")
	toolNamed(t, tools(t, e, "--server", "fs"), "fs", "list_directory")

	cfg, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, "extensions.json\n"+string(cfg), "daemon output\n"+e.DaemonOutput())
	for _, o := range outputs {
		if strings.Contains(o, secret) {
			t.Errorf("the secret leaked into %.200s", o)
		}
	}
}

// quickstartLines returns the command lines of the README's Quickstart
// block, without comments and blank lines.
func quickstartLines(t *testing.T) []string {
	t.Helper()
	lines := readmeBlock(t, "## Quickstart")
	if len(lines) < 8 {
		t.Fatalf("the Quickstart block has %d command lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	return lines
}
