package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFaceCallsAToolAtOnceAfterItsServerIsAdded: `plexus add` returns once
// the server is ready, its tools in the catalog; a client that calls one
// of them the moment after — on a session it already had — gets the
// tool, not "unknown tool", though the face adds a changed catalog's
// tools a little later (it folds a burst of changes into one sync).
// The tool's name is learnt first (names are stable: the same server
// and tool give the same name), then its server removed and added again,
// and called the moment the add returns, several times over.
func TestFaceCallsAToolAtOnceAfterItsServerIsAdded(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	cs := httpFace(t, base+"/mcp", token, nil)
	e.MustRun("add", "again", "--", e.Bin, "example-server")
	echo := toolNamed(t, tools(t, e, "--server", "again"), "again", "echo").Name
	for i := range 5 {
		e.MustRun("rm", "again")
		e.MustRun("add", "again", "--", e.Bin, "example-server")
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "x"}})
		if got := textOfResult(t, res, err); got != "x" {
			t.Fatalf("round %d: the echo called at once after its server's add: %q", i, got)
		}
	}
}
