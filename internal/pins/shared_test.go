package pins

import (
	"sync"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// sharedDocs is a shared backend in memory: writes are conditional on the
// generation read, as the database's are.
type sharedDocs struct {
	docstore.Files // what the test does not use
	mu             sync.Mutex
	docs           map[string]docstore.Doc
}

func (s *sharedDocs) Read(name string) (docstore.Doc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[name], nil
}

func (s *sharedDocs) Write(name string, prev docstore.Doc, data []byte, _ bool) (docstore.Doc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.docs[name]
	if cur.Gen != prev.Gen {
		return docstore.Doc{}, &docstore.StaleError{Name: name, Current: cur}
	}
	d := docstore.Doc{Exists: true, Data: data, Gen: cur.Gen + 1}
	s.docs[name] = d
	return d, nil
}

func (s *sharedDocs) Shared() bool { return true }

// TestConcurrentApprovalsAreAllKept: two daemons sharing one store (a
// team's replicas) each approve a server of their own, the second from a
// copy of the pins that predates the first's approval: both approvals are
// kept — the second write takes what the first wrote and changes only its
// own server. Before, the second replica's whole copy replaced the first's
// write, and the server approved there needed approval again everywhere.
// Its tool pins and a server the second forgets go the same way.
func TestConcurrentApprovalsAreAllKept(t *testing.T) {
	docs := &sharedDocs{docs: map[string]docstore.Doc{}}
	one := config.Server{Type: config.TypeStdio, Command: "one"}
	two := config.Server{Type: config.TypeStdio, Command: "two"}
	gone := config.Server{Type: config.TypeStdio, Command: "gone"}
	a, err := OpenOn(docs, map[string]config.Server{"gone": gone})
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenOn(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Approve("one", TrustOf(one), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Approve("two", TrustOf(two), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget("gone"); err != nil {
		t.Fatal(err)
	}
	for who, s := range map[string]*Store{"a": a, "b": b} {
		if err := s.Refresh(); err != nil {
			t.Fatal(err)
		}
		for name, sc := range map[string]config.Server{"one": one, "two": two} {
			if p := s.Pending(name, TrustOf(sc)); p != nil {
				t.Errorf("%s: server %s needs approval again: %s", who, name, p.Reason)
			}
		}
		if _, ok := s.File().Servers["gone"]; ok {
			t.Errorf("%s: the forgotten server is pinned again", who)
		}
	}
	fresh, err := OpenOn(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(fresh.File().Servers); got != 2 || fresh.Pending("one", TrustOf(one)) != nil || fresh.Pending("two", TrustOf(two)) != nil {
		t.Errorf("the store holds %d servers' pins, want one and two approved: %+v", got, fresh.File().Servers)
	}
}
