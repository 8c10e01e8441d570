package oauth_test

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportsOnlyLowerLayers holds the architecture: oauth sits under the
// host, beside store, and reaches nothing above it.
func TestImportsOnlyLowerLayers(t *testing.T) {
	allowed := map[string]bool{"internal/oauth": true, "internal/config": true, "internal/atomicfile": true}
	for _, pkg := range testenv.OwnDeps(t) {
		if !allowed[pkg] {
			t.Errorf("oauth depends on %s: it may import only config and atomicfile of ours", pkg)
		}
	}
}
