package oauth_test

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportsOnlyLowerLayers holds the architecture: oauth sits under the
// host, beside store, and reaches nothing above it.
func TestImportsOnlyLowerLayers(t *testing.T) {
	// jsontree is config's JSON parser, nothing of its own; connlimit
	// (which imports nothing of ours) bounds the login's listener; audit
	// (which imports only caller) records logins.
	allowed := map[string]bool{"internal/oauth": true, "internal/config": true, "internal/jsontree": true, "internal/atomicfile": true, "internal/caller": true, "internal/audit": true, "internal/docstore": true, "internal/connlimit": true}
	for _, pkg := range testenv.OwnDeps(t) {
		if !allowed[pkg] {
			t.Errorf("oauth depends on %s: it may import only config (with jsontree), atomicfile, caller, audit, docstore and connlimit of ours", pkg)
		}
	}
}
