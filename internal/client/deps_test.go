package client_test

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportsOnlyAPITypes keeps the client a thin layer that every front end
// can use: of Plexus it may import the wire types and the event-stream
// reader alone.
func TestImportsOnlyAPITypes(t *testing.T) {
	for _, pkg := range testenv.OwnDeps(t) {
		if pkg != "internal/client" && pkg != "internal/apitype" && pkg != "internal/sse" {
			t.Errorf("client depends on %s", pkg)
		}
	}
}
