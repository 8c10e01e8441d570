package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestLeases: one owner a server at a time; the lease is renewed by its
// owner, taken by another only once expired or released, and the fencing
// token grows at every change of owner; the owner's address comes with
// it; replicas without a heartbeat are not found.
func TestLeases(t *testing.T) {
	pg := testenv.StartPostgres(t)
	s := open(t, pg.URL, pgstore.Keys{Current: newKey(t)})
	ctx := context.Background()
	if err := s.Beat(ctx, "a", "10.0.0.1:7781"); err != nil {
		t.Fatal(err)
	}
	// Changes of owner are announced; renewals are not.
	notices := make(chan string, 16)
	fctx, stop := context.WithCancel(ctx)
	followed := make(chan error)
	go func() {
		followed <- s.FollowLeases(fctx, func(server string) {
			if server != "" {
				notices <- server
			}
		})
	}()
	defer func() { stop(); <-followed }()
	time.Sleep(200 * time.Millisecond) // listening
	noticed := func(want bool) {
		t.Helper()
		select {
		case got := <-notices:
			if !want || got != "docs" {
				t.Fatalf("a notice %q, want one: %v", got, want)
			}
		case <-time.After(500 * time.Millisecond):
			if want {
				t.Fatal("no notice of a change of owner")
			}
		}
	}
	claim := func(self string, ttl time.Duration) pgstore.Lease {
		t.Helper()
		got, err := s.Claim(ctx, []string{"docs"}, self, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return got["docs"]
	}
	if l := claim("a", time.Minute); l != (pgstore.Lease{Owner: "a", Addr: "10.0.0.1:7781", Token: 1}) {
		t.Fatalf("first claim: %+v", l)
	}
	noticed(true)
	if l := claim("b", time.Minute); l.Owner != "a" || l.Token != 1 {
		t.Fatalf("b claimed a's live lease: %+v", l)
	}
	if l := claim("a", 300*time.Millisecond); l.Owner != "a" || l.Token != 1 {
		t.Fatalf("a's renewal: %+v", l)
	}
	noticed(false) // nor b's failed claim
	if l := claim("b", time.Minute); l != (pgstore.Lease{Owner: "b", Token: 2}) {
		t.Fatalf("b after a's lease expired: %+v (b has no heartbeat: no address)", l)
	}
	noticed(true)
	if err := s.Release(ctx, []string{"docs"}, "b"); err != nil {
		t.Fatal(err)
	}
	noticed(true)
	if l := claim("a", time.Minute); l.Owner != "a" || l.Token != 3 {
		t.Fatalf("a after b released: %+v", l)
	}

	// Ten replicas claim a fresh server at once: one wins.
	var wg sync.WaitGroup
	owners := make(chan string, 10)
	for i := range 10 {
		wg.Go(func() {
			got, err := s.Claim(ctx, []string{"fresh"}, string(rune('k'+i)), time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			owners <- got["fresh"].Owner
		})
	}
	wg.Wait()
	close(owners)
	first := <-owners
	for o := range owners {
		if o != first {
			t.Fatalf("two owners of one server: %s and %s", first, o)
		}
	}

	if addr, err := s.Replica(ctx, "a", time.Minute); err != nil || addr != "10.0.0.1:7781" {
		t.Fatalf("replica a: %q, %v", addr, err)
	}
	if _, err := s.Replica(ctx, "a", time.Nanosecond); !errors.Is(err, pgstore.ErrNoReplica) {
		t.Fatalf("a replica without a recent heartbeat: %v", err)
	}
	if err := s.Leave(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replica(ctx, "a", time.Minute); !errors.Is(err, pgstore.ErrNoReplica) {
		t.Fatalf("a replica that left: %v", err)
	}
}
