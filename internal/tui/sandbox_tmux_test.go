package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalSandbox: in the real terminal, the form's sandbox rows
// confine a stdio server: the strict preset switched on, a folder it may
// read and a port it may reach; the daemon starts it sandboxed, the edit
// form shows the sandbox again, a relative folder is refused by the
// config's own validation (nothing saved), and switching it off removes it.
func TestTerminalSandbox(t *testing.T) {
	needTmux(t)
	e := testenv.New(t)
	e.StartDaemon()
	docs := filepath.Join(t.TempDir(), "my docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	x := openStdioForm(t, e)
	keys := func(k ...string) { x.must(append([]string{"send-keys", "-t", "tui"}, k...)...) }
	typed := func(s string) { keys("-l", s) }
	x.waitText("sandbox       [off]")
	typed(e.Bin + " example-server")
	keys("Tab", "C-u")
	typed("boxed")
	keys("Tab", "Tab", "Right")
	x.waitText("[on: strict, widened below]", "may read", "may write", "network")
	keys("Tab")
	typed(`"` + docs + `"`)
	keys("Tab", "Tab")
	typed("127.0.0.1:9")
	keys("C-s")
	x.waitText("added boxed (ready")
	ext, _ := files(t, e.Home)
	for _, want := range []string{`"sandbox": {`, `"read": [`, docs, `"network": [`, `"127.0.0.1:9"`} {
		if !strings.Contains(ext, want) {
			t.Fatalf("extensions.json lacks %s:\n%s", want, ext)
		}
	}
	x.waitText("sandbox")

	keys("Enter")
	x.waitText("edit boxed", "[on: strict, widened below]", "'"+docs+"'", "127.0.0.1:9")
	keys("Down", "Down", "Down", "C-u")
	typed("relative/dir")
	keys("C-s")
	x.waitText("sandbox.filesystem.read[0]", "Nothing was saved")
	if ext, _ := files(t, e.Home); strings.Contains(ext, "relative/dir") {
		t.Fatalf("a relative folder was saved:\n%s", ext)
	}
	keys("Up", "Left")
	x.waitText("sandbox       [off]")
	keys("C-s")
	x.waitText("saved boxed (ready")
	if ext, _ := files(t, e.Home); strings.Contains(ext, `"sandbox"`) {
		t.Fatalf("the sandbox is still there after switching it off:\n%s", ext)
	}
}
