package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyAPITypes keeps the client a thin layer that every front end
// can use: of Plexus it may import the wire types alone.
func TestImportsOnlyAPITypes(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/plexus-mcp/plexus/"
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, mod) && pkg != mod+"internal/client" && pkg != mod+"internal/apitype" {
			t.Errorf("client depends on %s", pkg)
		}
	}
}
