package webui

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointOneWay holds the layering of the loopback side: the
// daemon wires webui to localapi; webui uses of Plexus only the wire types
// and localapi's loopback check, and reaches the engine only through the
// API handler it is given; localapi never imports webui (the UI login
// route reaches it through a hook the daemon sets).
func TestDependenciesPointOneWay(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	const mod = "github.com/plexus-mcp/plexus/"
	out, err := exec.Command(goTool, "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{mod + "internal/apitype": true, mod + "internal/localapi": true}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, mod) && !allowed[pkg] {
			t.Errorf("webui imports %s: it may import only apitype and localapi of Plexus", pkg)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", "../localapi", "../host", "../client", "../cli").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == mod+"internal/webui" {
			t.Errorf("localapi, host, client or cli depends on webui")
		}
	}
}
