package pins

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// TestGroupCommit: servers whose first tools arrive while a write is under
// way share the next write, and each offers its tools only once that write
// is durable.
func TestGroupCommit(t *testing.T) {
	const n = 20
	configured := map[string]config.Server{}
	for i := range n {
		configured[fmt.Sprintf("s%d", i)] = stdio(fmt.Sprintf("server-%d", i))
	}
	home := t.TempDir()
	s := open(t, home, configured)
	rev := s.File().Revision

	s.writeMu.Lock() // a write under way
	decisions := make([]Decision, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("s%d", i)
			decisions[i] = s.Check(name, TrustOf(configured[name]), []catalog.Entry{tool(name, "a", "A."), tool(name, "b", "B.")})
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for queued := 0; queued < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers queued their pins", queued, n)
		}
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		if s.open != nil {
			queued = len(s.open.servers)
		}
		s.mu.Unlock()
	}
	if got := s.File().Revision; got != rev {
		t.Fatalf("pins saved before the write under way ended: revision %d, want %d", got, rev)
	}
	s.writeMu.Unlock()
	wg.Wait()

	if got := s.File().Revision; got != rev+1 {
		t.Errorf("revision %d after %d servers' first tools, want %d: one write for all", got, n, rev+1)
	}
	for i, d := range decisions {
		if len(d.Offered) != 2 || len(d.Held) != 0 {
			t.Errorf("s%d: offered %v, held %v", i, names(d.Offered), heldNames(d.Held))
		}
	}
	reopened := open(t, home, nil)
	for i := range n {
		if got := len(reopened.File().Servers[fmt.Sprintf("s%d", i)].Tools); got != 2 {
			t.Errorf("s%d: %d tools pinned on disk, want 2", i, got)
		}
	}
}

// TestGroupCommitAfterForget: pins queued for a server that is forgotten
// before they are written are dropped, not written back with its approval.
func TestGroupCommitAfterForget(t *testing.T) {
	s := open(t, t.TempDir(), map[string]config.Server{"docs": stdio("docs-mcp")})
	tr := TrustOf(stdio("docs-mcp"))
	s.writeMu.Lock()
	done := make(chan Decision)
	go func() { done <- s.Check("docs", tr, []catalog.Entry{tool("docs", "a", "A.")}) }()
	waitQueued(t, s, "docs")
	// Forget as if it had the writer's lock after the queued pins.
	s.mu.Lock()
	next := s.clone()
	delete(next.Servers, "docs")
	if err := s.saveLocked(next, "docs"); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	s.writeMu.Unlock()
	d := <-done
	if d.Pending == nil || len(d.Offered) != 0 {
		t.Errorf("a forgotten server's tools: %+v", d)
	}
	if _, ok := s.File().Servers["docs"]; ok {
		t.Error("the queued pins brought the forgotten server back")
	}
}

func waitQueued(t *testing.T, s *Store, server string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		ok := s.open != nil && len(s.open.servers[server].tools) > 0
		s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's pins were never queued", server)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPrepare: definitions hashed ahead are the ones Check uses.
func TestPrepare(t *testing.T) {
	s := open(t, t.TempDir(), map[string]config.Server{"docs": stdio("docs-mcp")})
	entries := []catalog.Entry{tool("docs", "a", "A."), tool("docs", "b", "B.")}
	s.Prepare(entries)
	s.mu.Lock()
	cached := len(s.defs)
	s.mu.Unlock()
	if cached != 2 {
		t.Fatalf("%d definitions prepared, want 2", cached)
	}
	d := s.Check("docs", TrustOf(stdio("docs-mcp")), entries)
	if len(d.Offered) != 2 {
		t.Fatalf("offered %v", names(d.Offered))
	}
	if got, want := s.File().Servers["docs"].Tools["a"].Hash, hashOf(entries[0]).hash; got != want {
		t.Errorf("pinned hash %s, want %s", got, want)
	}
}
