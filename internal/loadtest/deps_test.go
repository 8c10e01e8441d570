package loadtest

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportsOnlyClientLayers keeps the load tool an outside client of the
// daemon: it may reach it through its binary, the socket client and the
// MCP face, never through the engine it measures.
func TestImportsOnlyClientLayers(t *testing.T) {
	allowed := map[string]bool{"internal/loadtest": true, "internal/client": true, "internal/apitype": true, "internal/cmdline": true, "internal/sse": true, "internal/rawhttp": true}
	for _, pkg := range testenv.OwnDeps(t) {
		if !allowed[pkg] {
			t.Errorf("loadtest depends on %s: it may import only client (with apitype and sse), cmdline and rawhttp", pkg)
		}
	}
}
