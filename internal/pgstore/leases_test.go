package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestLeases: one owner a server at a time; a claim renews its owner's
// lease (its renewals count) and takes another's only when the caller
// says so, the fencing token growing at every change of owner; a release
// frees it; changes of owner are announced, renewals not; the owner's
// address comes from its sealed row.
func TestLeases(t *testing.T) {
	pg := testenv.StartPostgres(t)
	s := open(t, pg.URL, pgstore.Keys{Current: newKey(t)})
	ctx := context.Background()
	if err := s.Beat(ctx, pgstore.Replica{ID: "a", Addr: "10.0.0.1:7781", FP: "ab"}); err != nil {
		t.Fatal(err)
	}
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
	always := func(pgstore.Lease) bool { return true }
	never := func(pgstore.Lease) bool { return false }
	claim := func(self string, take func(pgstore.Lease) bool) pgstore.Lease {
		t.Helper()
		got, err := s.Claim(ctx, self, []string{"docs"}, time.Minute, take)
		if err != nil {
			t.Fatal(err)
		}
		l := got["docs"]
		if !l.Sealed {
			t.Fatalf("a lease the store wrote is not sealed: %+v", l)
		}
		return l
	}
	if l := claim("b", never); l.Owner != "" || l.Token != 0 { // a free row is made
		t.Fatalf("a lease nobody took: %+v", l)
	}
	if l := claim("a", always); l.Owner != "a" || l.Addr != "10.0.0.1:7781" || l.FP != "ab" || l.Token != 1 || l.Renewals != 0 { // announced
		t.Fatalf("first claim: %+v", l)
	}
	if l := claim("b", never); l.Owner != "a" || l.Token != 1 {
		t.Fatalf("b, not taking: %+v", l)
	}
	if l := claim("a", always); l.Owner != "a" || l.Token != 1 || l.Renewals != 1 {
		t.Fatalf("a's renewal: %+v", l)
	}
	if l := claim("b", func(l pgstore.Lease) bool { return l.Owner == "a" && l.Renewals == 1 }); l.Owner != "b" || l.Token != 2 || l.Renewals != 0 || l.Addr != "" { // announced
		t.Fatalf("b taking a's lease: %+v (b has no heartbeat: no address)", l)
	}
	if err := s.Release(ctx, []string{"docs"}, "a"); err != nil { // not a's: nothing
		t.Fatal(err)
	}
	if err := s.Release(ctx, []string{"docs"}, "b"); err != nil { // announced
		t.Fatal(err)
	}
	if l := claim("a", func(l pgstore.Lease) bool { return l.Owner == "" }); l.Owner != "a" || l.Token != 3 { // announced
		t.Fatalf("a after b released: %+v", l)
	}

	// Ten replicas claim a fresh server at once, each taking it if free:
	// one wins.
	var wg sync.WaitGroup
	owners := make(chan string, 10)
	for i := range 10 {
		wg.Go(func() {
			got, err := s.Claim(ctx, string(rune('k'+i)), []string{"fresh"}, time.Minute, func(l pgstore.Lease) bool { return l.Owner == "" })
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
		t.Errorf("%d notices of docs, want 4: a's first claim, b's take, b's release, a's claim after it (a renewal, or a release of a lease one does not hold, is not announced)", docs)
	}

	if r, err := s.Replica(ctx, "a", time.Minute); err != nil || r.Addr != "10.0.0.1:7781" {
		t.Fatalf("replica a: %+v, %v", r, err)
	}
	if _, err := s.Replica(ctx, "a", time.Nanosecond); !errors.Is(err, pgstore.ErrNoReplica) {
		t.Fatalf("a replica without a recent heartbeat: %v", err)
	}
	if all, err := s.Replicas(ctx, time.Nanosecond); err != nil || len(all) != 1 || all["a"].Alive {
		t.Fatalf("the replicas, none beating within a nanosecond: %+v, %v", all, err)
	}
	if err := s.Leave(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replica(ctx, "a", time.Minute); !errors.Is(err, pgstore.ErrNoReplica) {
		t.Fatalf("a replica that left: %v", err)
	}
}

// TestForgedRows: a writer of the database without the store's key
// cannot make a row the replicas trust. A replica row it writes (or one
// whose address it changes) is not found, listed or joined to a lease; a
// lease it writes or changes is not sealed (the replicas take it for
// free); and a store with another key trusts none of this one's rows.
func TestForgedRows(t *testing.T) {
	pg := testenv.StartPostgres(t)
	key := newKey(t)
	s := open(t, pg.URL, pgstore.Keys{Current: key})
	ctx := context.Background()
	if err := s.Beat(ctx, pgstore.Replica{ID: "a", Addr: "10.0.0.1:7781", FP: "aa"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, "a", []string{"docs"}, time.Minute, func(pgstore.Lease) bool { return true }); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	// The attacker's own replica, and a's row pointed at the attacker.
	exec(`INSERT INTO plexus_replicas (id, addr, fp, sig) VALUES ('evil', '10.6.6.6:7781', 'ee', '\x00')`)
	exec(`UPDATE plexus_replicas SET addr = '10.6.6.6:7781' WHERE id = 'a'`)
	for _, id := range []string{"evil", "a"} {
		if r, err := s.Replica(ctx, id, time.Minute); !errors.Is(err, pgstore.ErrNoReplica) {
			t.Errorf("forged row %s found: %+v, %v", id, r, err)
		}
	}
	if all, err := s.Replicas(ctx, time.Minute); err != nil || len(all) != 0 {
		t.Errorf("forged rows listed: %+v, %v", all, err)
	}
	got, err := s.Claim(ctx, "b", []string{"docs"}, time.Minute, func(pgstore.Lease) bool { return false })
	if err != nil || got["docs"].Owner != "a" || !got["docs"].Sealed || got["docs"].Addr != "" {
		t.Errorf("a's lease, its owner's row forged: %+v, %v (want no address)", got["docs"], err)
	}
	// a's row sealed again; the lease given to the attacker.
	if err := s.Beat(ctx, pgstore.Replica{ID: "a", Addr: "10.0.0.1:7781", FP: "aa"}); err != nil {
		t.Fatal(err)
	}
	exec(`UPDATE plexus_leases SET owner = 'evil' WHERE server = 'docs'`)
	exec(`INSERT INTO plexus_leases (server, owner, token, renewals, expires, sig) VALUES ('made', 'evil', 1, 0, 'infinity', '\x01')`)
	got, err = s.Claim(ctx, "b", []string{"docs", "made"}, time.Minute, func(pgstore.Lease) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"docs", "made"} {
		if l := got[name]; l.Sealed || l.Addr != "" {
			t.Errorf("forged lease %s trusted: %+v", name, l)
		}
	}
	// Taken over: sealed again, with a token past the forged one's.
	got, err = s.Claim(ctx, "b", []string{"made"}, time.Minute, func(l pgstore.Lease) bool { return !l.Sealed })
	if l := got["made"]; err != nil || l.Owner != "b" || !l.Sealed || l.Token != 2 {
		t.Errorf("a forged lease taken over: %+v, %v", l, err)
	}
	// Another key trusts nothing of this one's.
	other := open(t, pg.URL, pgstore.Keys{Current: newKey(t)})
	if r, err := other.Replica(ctx, "a", time.Minute); !errors.Is(err, pgstore.ErrNoReplica) {
		t.Errorf("a row sealed under another key found: %+v, %v", r, err)
	}
	// During a rotation, the old key's rows are trusted.
	rotating := open(t, pg.URL, pgstore.Keys{Current: newKey(t), Old: [][]byte{key}})
	if r, err := rotating.Replica(ctx, "a", time.Minute); err != nil || r.Addr != "10.0.0.1:7781" {
		t.Errorf("a row sealed under the old key during a rotation: %+v, %v", r, err)
	}
}
