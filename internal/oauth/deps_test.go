package oauth

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyLowerLayers holds the architecture: oauth sits under the
// host, beside store, and reaches nothing above it.
func TestImportsOnlyLowerLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/plexus-mcp/plexus/internal/"
	allowed := map[string]bool{mod + "oauth": true, mod + "config": true, mod + "atomicfile": true}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, mod) && !allowed[pkg] {
			t.Errorf("oauth depends on %s: it may import only config and atomicfile of ours", pkg)
		}
	}
}
