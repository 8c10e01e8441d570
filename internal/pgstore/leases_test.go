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
	// Changes of owner are announced; renewals and failed claims are not.
	// Notices come in the order of the commits that made them, so the
	// count of docs's notices that come before the notice of a later
	// change (fresh's, below) is exact: no fixed wait decides it.
	notices := make(chan string, 64)
	fctx, stop := context.WithCancel(ctx)
	followed := make(chan error)
	go func() {
		followed <- s.FollowLeases(fctx, func(server string) { notices <- server })
	}()
	defer func() { stop(); <-followed }()
	select {
	case <-notices: // "": listening
	case <-time.After(30 * time.Second):
		t.Fatal("not listening for notices")
	}
	claim := func(self string, ttl time.Duration) pgstore.Lease {
		t.Helper()
		got, err := s.Claim(ctx, []string{"docs"}, self, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return got["docs"]
	}
	if l := claim("a", time.Minute); l != (pgstore.Lease{Owner: "a", Addr: "10.0.0.1:7781", Token: 1}) { // announced
		t.Fatalf("first claim: %+v", l)
	}
	if l := claim("b", time.Minute); l.Owner != "a" || l.Token != 1 {
		t.Fatalf("b claimed a's live lease: %+v", l)
	}
	if l := claim("a", 300*time.Millisecond); l.Owner != "a" || l.Token != 1 {
		t.Fatalf("a's renewal: %+v", l)
	}
	// b claims until a's short lease has expired: each failed claim
	// leaves the lease as it is, and the one that succeeds is announced.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l := claim("b", time.Minute)
		if l.Owner == "b" {
			if l != (pgstore.Lease{Owner: "b", Token: 2}) {
				t.Fatalf("b after a's lease expired: %+v (b has no heartbeat: no address)", l)
			}
			break
		}
		if l.Owner != "a" || l.Token != 1 || time.Now().After(deadline) {
			t.Fatalf("b's claim while a's lease of 300 ms runs out: %+v", l)
		}
	}
	if err := s.Release(ctx, []string{"docs"}, "b"); err != nil { // announced
		t.Fatal(err)
	}
	if l := claim("a", time.Minute); l.Owner != "a" || l.Token != 3 { // announced
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
	// fresh's first owner was announced after every change of docs.
	docs := 0
	for fresh := false; !fresh; {
		select {
		case n := <-notices:
			switch n {
			case "docs":
				docs++
			case "fresh":
				fresh = true
			case "":
				t.Fatal("the notices' connection was made again: notices were lost, the count cannot be checked")
			default:
				t.Fatalf("a notice of %q", n)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no notice of fresh's first owner (%d of docs before)", docs)
		}
	}
	if docs != 4 {
		t.Errorf("%d notices of docs, want 4: a's first claim, b's claim once a's lease expired, b's release, a's claim after it (a renewal or a failed claim is not announced)", docs)
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
