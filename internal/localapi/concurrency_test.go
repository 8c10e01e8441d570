package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// TestConcurrentEditsNeverLost: 50 clients read the settings and each adds
// a server based on the revision it read, at once. Every write either lands
// or is refused with 409 stale_revision; the revision grows by exactly the
// number that landed, and every one that landed is in the file.
func TestConcurrentEditsNeverLost(t *testing.T) {
	dir := t.TempDir()
	serveIn(t, dir)
	c := client.New(dir)
	ctx := t.Context()
	// Start from revision 1: one existing (disabled) server.
	disabled := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"stdio","command":"/bin/srv%d","enabled":false}`, i))
	}
	if _, err := c.AddServer(ctx, apitype.PutServerRequest{Name: "base", Config: disabled(0)}, 0); err != nil {
		t.Fatal(err)
	}
	list, err := c.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := list.Revision

	var wg sync.WaitGroup
	var mu sync.Mutex
	landed, stale := map[string]bool{}, 0
	start := make(chan struct{})
	for i := 1; i <= 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("s%02d", i)
			<-start
			_, err := c.AddServer(ctx, apitype.PutServerRequest{Name: name, Config: disabled(i)}, base)
			mu.Lock()
			defer mu.Unlock()
			var ae *client.APIError
			switch {
			case err == nil:
				landed[name] = true
			case errors.As(err, &ae) && ae.Status == 409 && ae.Body.Code == apitype.CodeStale:
				stale++
			default:
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(landed)+stale != 50 {
		t.Fatalf("%d landed + %d refused != 50", len(landed), stale)
	}
	// All were based on the same revision: exactly one can land.
	if len(landed) != 1 {
		t.Fatalf("%d writes based on revision %d landed, want exactly 1", len(landed), base)
	}
	list, err = c.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list.Revision != base+int64(len(landed)) {
		t.Fatalf("revision %d, want %d + %d landed", list.Revision, base, len(landed))
	}
	present := map[string]bool{}
	for _, s := range list.Servers {
		present[s.Name] = true
	}
	for name := range landed {
		if !present[name] {
			t.Errorf("%s landed but is not in the settings", name)
		}
	}
	if len(list.Servers) != 1+len(landed) {
		t.Errorf("%d servers, want %d", len(list.Servers), 1+len(landed))
	}
}
