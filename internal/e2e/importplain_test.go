package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportPlainValuesReachServer imports a Gemini CLI settings file by
// the client's name through the real binary and daemon. The server, a
// real child process, gets its plain values as written (DEBUG=1, an
// empty string) and runs in its cwd resolved against the file's folder;
// the secret is in the managed store only, and the plain values are
// visible in the settings.
func TestImportPlainValuesReachServer(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	userHome := t.TempDir()
	e.ExtraEnv = []string{"HOME=" + userHome, "XDG_CONFIG_HOME="}
	e.StartDaemon()

	gemini := filepath.Join(userHome, ".gemini")
	work := filepath.Join(gemini, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(userHome, "seen.txt")
	script := filepath.Join(userHome, "srv.sh")
	body := "#!/bin/sh\nprintf '%s|%s|%s|%s' \"$DEBUG\" \"${EMPTY-unset}\" \"$(pwd)\" \"${#API_KEY}\" > " + strconv.Quote(out) +
		"\nexec " + strconv.Quote(e.Bin) + " example-server\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	file := `{"mcpServers": {"probe": {"command": ` + strconv.Quote(script) + `, "cwd": "work",
		"env": {"DEBUG": "1", "EMPTY": "", "API_KEY": "` + importCanary + `-gemini"}}}}`
	if err := os.WriteFile(filepath.Join(gemini, "settings.json"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.Run("", "import", "gemini")
	if r.Code != 0 {
		t.Fatalf("import gemini: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	mustContain(t, "import gemini", r.Stdout, "(gemini)")
	mustContain(t, "import gemini", r.Stdout, "env.DEBUG: kept as a plain value")
	if strings.Contains(r.Stdout+r.Stderr, importCanary) {
		t.Fatalf("the secret leaked:\n%s%s", r.Stdout, r.Stderr)
	}
	waitState(t, e, "probe", "ready", 30*time.Second)
	seen, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "1||" + work + "|" + strconv.Itoa(len(importCanary+"-gemini"))
	if string(seen) != want {
		t.Errorf("the server saw %q, want %q (DEBUG|EMPTY|cwd|length of API_KEY)", seen, want)
	}
	if names := strings.Fields(e.MustRun("secret", "ls")); len(names) != 1 || names[0] != "PROBE_API_KEY" {
		t.Errorf("secret ls: %v, want PROBE_API_KEY only", names)
	}
	e.StopDaemon()
	settings, err := os.ReadFile(filepath.Join(e.Home, "extensions.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"value": "1"`, `"value": ""`, `"env": "PROBE_API_KEY"`, strconv.Quote(work)} {
		mustContain(t, "extensions.json", string(settings), want)
	}
	if strings.Contains(string(settings), importCanary) {
		t.Error("extensions.json holds the secret")
	}
}
