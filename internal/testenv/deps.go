package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// Module is the import path prefix of Plexus's own packages.
const Module = "github.com/plexus-mcp/plexus/"

// OwnDeps lists the packages of this module that the package in the
// current directory depends on (itself included), for tests that hold the
// architecture's import direction. It skips the test without a go command.
func OwnDeps(t testing.TB) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var own []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, Module) {
			own = append(own, strings.TrimPrefix(pkg, Module))
		}
	}
	return own
}
