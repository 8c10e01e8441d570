package localapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/host"
)

// TestClassifyUnreachableStore: a save the team's database could not take
// is 503 saying the store is unreachable and nothing was changed (or that
// the change may or may not have been made, when the connection went
// during its commit), never a 500 "bug in the daemon".
func TestClassifyUnreachableStore(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.9:5432: connect: connection refused")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("saving: %w", &docstore.UnreachableError{Name: "extensions.json", Err: cause}), "the store is unreachable, nothing was changed"},
		{&docstore.UnreachableError{Name: "creds.json", Unknown: true, Err: cause}, "may or may not have been made"},
		{fmt.Errorf("reading: %w: %w", docstore.ErrUnreachable, cause), "the store is unreachable, nothing was changed"},
		// A server being added whose lease no replica could take now
		// (a replica stopping, the database slow): try again, not a bug.
		{fmt.Errorf("server s: placement: %w", &host.PlacementError{Err: errors.New("no replica runs it now")}), "nothing was saved"},
	} {
		status, body := classify(tc.err)
		if status != http.StatusServiceUnavailable || body.Code != apitype.CodeUnavailable || !strings.Contains(body.Message, tc.want) || body.Hint == "" {
			t.Errorf("%v: %d %+v, want 503 saying %q with a hint", tc.err, status, body, tc.want)
		}
	}
}
