package importer

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/jsontree"
)

// TestKindsMatchTree holds the order that fromTree relies on when it
// converts a jsontree.Kind into a kind.
func TestKindsMatchTree(t *testing.T) {
	for k := jsontree.Null; k <= jsontree.Object; k++ {
		if got := kind(k).String(); got != k.String() {
			t.Errorf("kind %d is %q here and %q in jsontree", k, got, k)
		}
	}
}
