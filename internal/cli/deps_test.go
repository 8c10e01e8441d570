package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyFrontEndLayers holds the architecture: a front end reaches
// the daemon through client and apitype only (R-OWN-2), so the CLI cannot
// grow a second writer of the settings or reach into the engine. The CLI
// runs the terminal UI, so this holds the TUI's imports too.
func TestImportsOnlyFrontEndLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/plexus-mcp/plexus/"
	allowed := map[string]bool{
		mod + "internal/cli":        true,
		mod + "internal/client":     true,
		mod + "internal/apitype":    true,
		mod + "internal/cmdline":    true,
		mod + "internal/serverconf": true,
		mod + "internal/tui":        true,
		// the stdio-to-HTTP bridge of plexus mcp: standard library only
		mod + "internal/mcpbridge": true,
	}
	forbidden := []string{"internal/host", "internal/supervisor", "internal/daemon", "internal/upstream", "internal/config", "internal/creds"}
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		for _, f := range forbidden {
			if pkg == mod+f || strings.HasPrefix(pkg, mod+f+"/") {
				t.Errorf("cli depends on %s", pkg)
			}
		}
		if !allowed[pkg] {
			t.Errorf("cli depends on %s: a front end may import only client, apitype, cmdline, serverconf, tui and mcpbridge", pkg)
		}
	}
}
