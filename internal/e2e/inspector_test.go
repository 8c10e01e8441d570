package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestInspectorThroughFace: the MCP Inspector's CLI, a real MCP client
// from npm, lists and calls tools through `plexus mcp` (stdio) and through
// the HTTP face.
func TestInspectorThroughFace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs the Inspector from npm")
	}
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npm is missing (CI installs it)")
	}
	modules := testenv.NPMInstall(t, filepath.Join(testenv.RepoRoot(), "internal", "e2e", "testdata", "inspector"), "inspector")
	cli := filepath.Join(modules, ".bin", "mcp-inspector-cli")
	e, base, token := faceEnv(t, "")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name

	// The Inspector CLI insists on a package.json in its working
	// directory's parent (inspector issues #834, #1503).
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}\n"), 0o644)
	work := filepath.Join(dir, "w")
	os.Mkdir(work, 0o755)
	inspect := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, cli, append([]string{"--cli"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := testenv.Run(t, cmd); err != nil {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, &out, &stderr)
		}
		return out.String()
	}
	type listing struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	has := func(out, name string) bool {
		var l listing
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("tools/list output: %v\n%s", err, out)
		}
		for _, tl := range l.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}

	if out := inspect(e.Bin, "mcp", "--method", "tools/list"); !has(out, echo) || !has(out, "plexus_status") {
		t.Errorf("tools/list through plexus mcp lacks %s: %s", echo, out)
	}
	if out := inspect(e.Bin, "mcp", "--method", "tools/call", "--tool-name", echo, "--tool-arg", "text=over stdio"); !strings.Contains(out, `"over stdio"`) {
		t.Errorf("tools/call through plexus mcp: %s", out)
	}
	if out := inspect(base+"/mcp", "--transport", "http", "--header", "Authorization: Bearer "+token, "--method", "tools/list"); !has(out, echo) {
		t.Errorf("tools/list through the HTTP face lacks %s: %s", echo, out)
	}
	if out := inspect(base+"/mcp", "--transport", "http", "--header", "Authorization: Bearer "+token,
		"--method", "tools/call", "--tool-name", echo, "--tool-arg", "text=over http"); !strings.Contains(out, `"over http"`) {
		t.Errorf("tools/call through the HTTP face: %s", out)
	}
}
