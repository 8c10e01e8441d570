package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeLeases is a LeaseTable in memory that can be made to fail, as the
// database's does (one transaction a claim).
type fakeLeases struct {
	mu     sync.Mutex
	leases map[string]Lease
	addrs  map[string]string // replica → address
	down   bool
	fail   int // claims to fail before down decides
	claims int
}

func newFakeLeases() *fakeLeases {
	return &fakeLeases{leases: map[string]Lease{}, addrs: map[string]string{}}
}

func (f *fakeLeases) Claim(_ context.Context, self string, servers []string, _ time.Duration, take func(Lease) bool) (map[string]Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("the database is slow: timeout")
	}
	if f.down {
		return nil, errors.New("the database is away")
	}
	out := map[string]Lease{}
	for _, s := range servers {
		l, ok := f.leases[s]
		if !ok {
			l = Lease{Server: s, Sealed: true}
		}
		if take(l) {
			if l.Owner == self && l.Sealed {
				l.Renewals++
			} else {
				l = Lease{Server: s, Owner: self, Token: l.Token + 1, Sealed: true}
			}
		}
		f.leases[s] = l
		l.Addr = f.addrs[l.Owner]
		out[s] = l
	}
	return out, nil
}

func (f *fakeLeases) Release(_ context.Context, servers []string, self string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errors.New("the database is away")
	}
	for _, s := range servers {
		if l := f.leases[s]; l.Owner == self {
			f.leases[s] = Lease{Server: s, Token: l.Token, Sealed: true}
		}
	}
	return nil
}

func (f *fakeLeases) set(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// fakeReplicas is a Table of fixed rows, or an error.
type fakeReplicas struct {
	mu   sync.Mutex
	rows map[string]Replica
	err  error
}

func (f *fakeReplicas) Beat(_ context.Context, r Replica) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	r.Alive = true
	f.rows[r.ID] = r
	return nil
}

func (f *fakeReplicas) Replicas(context.Context, time.Duration) (map[string]Replica, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return maps.Clone(f.rows), nil
}

func (f *fakeReplicas) Leave(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.rows, id)
	return nil
}

var quiet = slog.New(slog.DiscardHandler)

// newOwners is replica self's Owners of servers on table, with a registry
// that has beaten once; alive answers the probes.
func newOwners(t *testing.T, table *fakeLeases, self string, servers []string, alive func(Lease) bool) *Owners {
	t.Helper()
	reg := NewRegistry(&fakeReplicas{rows: map[string]Replica{}}, self, self+":1", "", quiet)
	reg.Beat(t.Context())
	table.mu.Lock()
	table.addrs[self] = self + ":1"
	table.mu.Unlock()
	return NewOwners(table, reg, self, func() []string { return servers }, func(_ context.Context, l Lease) bool { return alive(l) }, quiet)
}

// TestOwnersFence: a replica serves a server only under the token of the
// lease it holds; another replica's server is placed at that replica
// with the token; a request for a server it holds but does not run yet is
// refused as not made.
func TestOwnersFence(t *testing.T) {
	table := newFakeLeases()
	table.leases["theirs"] = Lease{Server: "theirs", Owner: "other", Token: 7, Sealed: true}
	table.addrs["other"] = "10.0.0.2:7781"
	o := newOwners(t, table, "self", []string{"mine", "theirs"}, func(Lease) bool { return true })
	if got := o.Claim(t.Context()); !slices.Equal(got, []string{"mine", "theirs"}) {
		t.Fatalf("first claim changed %v", got)
	}
	if tok, ok := o.Mine("mine"); !ok || tok != 1 {
		t.Fatalf("mine: %d, %v", tok, ok)
	}
	if p, err := o.Place("mine"); !p.Here || err != nil {
		t.Fatalf("a server this replica runs placed at %+v (%v)", p, err)
	}
	if p, err := o.Place("theirs"); err != nil || p != (Placement{Owner: "other", Addr: "10.0.0.2:7781", Token: 7}) {
		t.Fatalf("theirs placed at %+v (%v)", p, err)
	}
	served, runs := 0, false
	h := o.ServeOwned(func(string) bool { return runs }, func(w http.ResponseWriter, r *http.Request, server string) { served++ })
	mux := http.NewServeMux()
	mux.Handle(ServerPath+"{server}", h)
	call := func(server string, token int64) (int, string) {
		req := httptest.NewRequest("POST", ServerPath+server, nil)
		req.Header.Set(TokenHeader, strconv.FormatInt(token, 10))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		io.Copy(io.Discard, rec.Body)
		return rec.Code, rec.Header().Get(RefusedHeader)
	}
	if code, refused := call("mine", 1); code != http.StatusServiceUnavailable || refused == "" || served != 0 {
		t.Fatalf("a call under the lease's token before the server runs here: %d %q", code, refused)
	}
	runs = true
	if code, _ := call("mine", 1); code != http.StatusOK || served != 1 {
		t.Fatalf("a call under the lease's token: %d", code)
	}
	if code, refused := call("mine", 2); code != http.StatusConflict || refused == "" {
		t.Fatalf("a call under another token: %d, want 409 marked refused", code)
	}
	if code, _ := call("theirs", 7); code != http.StatusConflict {
		t.Fatalf("a call for a server another replica runs: %d, want 409", code)
	}
}

// TestOwnersServeThroughAnOutage: while the database is away, an owner
// serves on (nobody can take its leases) until HoldTTL - fenceMargin,
// then stops; once claims succeed again it runs what it stopped again
// (the placement changes back, so the host rebuilds it): the fault that
// left every stdio server failed after a stall until someone restarted it.
func TestOwnersServeThroughAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := newFakeLeases()
		o := newOwners(t, table, "self", []string{"mine"}, func(Lease) bool { return true })
		o.Claim(t.Context())
		if p, _ := o.Place("mine"); !p.Here {
			t.Fatalf("not placed here: %+v", p)
		}
		changes := make(chan []string, 16)
		o.OnChange(func(names []string) { changes <- names })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- o.Run(ctx) }()
		start := time.Now()
		table.set(true)
		// A 30 s outage: nothing changes, the lease stays served.
		time.Sleep(30 * time.Second)
		synctest.Wait()
		select {
		case names := <-changes:
			t.Fatalf("a 30 s outage changed %v", names)
		default:
		}
		if _, ok := o.Mine("mine"); !ok {
			t.Fatal("the owner stopped serving within a 30 s outage")
		}
		// A longer one: dropped at HoldTTL - fenceMargin after the last
		// good claim, not before.
		names := <-changes
		if !slices.Equal(names, []string{"mine"}) || time.Since(start) > HoldTTL-fenceMargin || time.Since(start) < HoldTTL-fenceMargin-ClaimEvery {
			t.Fatalf("dropped %v after %s, want [mine] at %s", names, time.Since(start), HoldTTL-fenceMargin)
		}
		if _, err := o.Place("mine"); !errors.Is(err, ErrNoOwner) {
			t.Fatalf("placing a server no replica may run now: %v", err)
		}
		table.set(false)
		names = <-changes
		if p, err := o.Place("mine"); !slices.Equal(names, []string{"mine"}) || !p.Here || err != nil {
			t.Fatalf("after the outage: changed %v, placed %+v (%v): the server is not run again", names, p, err)
		}
		cancel()
		<-done
	})
}

// TestPlaceClaimsAnAddedServerAgain: a server being added whose first
// claim fails (the database slow for one answer) is claimed again and
// placed here; only a database that fails every try makes it ErrNoOwner.
func TestPlaceClaimsAnAddedServerAgain(t *testing.T) {
	table := newFakeLeases()
	o := newOwners(t, table, "self", nil, func(Lease) bool { return true })
	table.mu.Lock()
	table.fail = 2 // two slow answers in a row
	table.mu.Unlock()
	if p, err := o.Place("added"); err != nil || !p.Here {
		t.Fatalf("placing a server added while the database was slow: %+v, %v", p, err)
	}
	table.set(true)
	before := table.claims
	if _, err := o.Place("another"); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("placing with the database away: %v, want ErrNoOwner", err)
	}
	if n := table.claims - before; n != claimTries {
		t.Fatalf("claimed %d times with the database away, want %d", n, claimTries)
	}
}

// TestOwnersTakeOver: another replica takes a lease only once it has seen
// its renewals stop for LeaseTTL through claims that all succeeded and
// its owner does not answer; or after HoldTTL, whatever it answers. An
// outage of the database in between starts the watch again: after it, a
// live owner has a second to renew.
func TestOwnersTakeOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := newFakeLeases()
		table.leases["srv"] = Lease{Server: "srv", Owner: "other", Token: 3, Sealed: true}
		table.addrs["other"] = "10.0.0.2:1"
		answers := true
		o := newOwners(t, table, "self", []string{"srv"}, func(Lease) bool { return answers })
		claimFor := func(d time.Duration) {
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(ClaimEvery) {
				o.Claim(t.Context())
			}
		}
		claimFor(LeaseTTL + 2*ClaimEvery)
		if o.Owner("srv") != "other" {
			t.Fatal("a lease taken from an owner that answers, before HoldTTL")
		}
		answers = false
		table.set(true)
		claimFor(LeaseTTL) // the database away: nothing is seen
		table.set(false)
		o.Claim(t.Context())
		if o.Owner("srv") != "other" {
			t.Fatal("a lease taken at once after an outage of the database")
		}
		start := time.Now()
		for o.Owner("srv") == "other" {
			o.Claim(t.Context())
			time.Sleep(ClaimEvery)
		}
		if took := time.Since(start); o.Owner("srv") != "self" || took < LeaseTTL || took > LeaseTTL+2*ClaimEvery {
			t.Fatalf("owner %q after %s, want self after LeaseTTL", o.Owner("srv"), took)
		}
		if tok, ok := o.Mine("srv"); !ok || tok != 4 {
			t.Fatalf("the lease taken: token %d, %v", tok, ok)
		}
		// HoldTTL: taken whatever the owner answers.
		table.leases["held"] = Lease{Server: "held", Owner: "other", Token: 1, Sealed: true}
		answers = true
		o.wanted = func() []string { return []string{"srv", "held"} }
		start = time.Now()
		for o.Owner("held") != "self" {
			o.Claim(t.Context())
			time.Sleep(ClaimEvery)
		}
		if took := time.Since(start); took < HoldTTL || took > HoldTTL+2*ClaimEvery {
			t.Fatalf("a live owner's lease taken after %s, want HoldTTL", took)
		}
	})
}

// TestAssign: nine servers over three replicas are three each; a replica
// that joins gets its share from the others, and one that leaves gives
// its own to them, moving no server more than needed; every replica
// computes the same.
func TestAssign(t *testing.T) {
	var servers []string
	for i := range 9 {
		servers = append(servers, fmt.Sprintf("s%d", i))
	}
	count := func(a map[string]string) map[string]int {
		n := map[string]int{}
		for _, r := range a {
			n[r]++
		}
		return n
	}
	moved := func(a, b map[string]string) int {
		n := 0
		for s := range a {
			if a[s] != b[s] {
				n++
			}
		}
		return n
	}
	none := func(string) string { return "" }
	// All on one replica, as the first to claim took them.
	one := Assign(servers, []string{"a"}, none)
	three := Assign(servers, []string{"a", "b", "c"}, func(s string) string { return one[s] })
	if n := count(three); n["a"] != 3 || n["b"] != 3 || n["c"] != 3 {
		t.Fatalf("nine over three: %v", n)
	}
	if m := moved(one, three); m != 6 {
		t.Fatalf("%d moved from one replica to three, want 6", m)
	}
	if again := Assign(servers, []string{"c", "a", "b"}, func(s string) string { return one[s] }); moved(again, three) != 0 {
		t.Fatal("the assignment depends on the order of the replicas")
	}
	// c leaves: only its three move.
	two := Assign(servers, []string{"a", "b"}, func(s string) string { return three[s] })
	if m, n := moved(three, two), count(two); m != 3 || n["a"]+n["b"] != 9 || n["a"] < 4 || n["b"] < 4 {
		t.Fatalf("c left: %d moved, %v", m, n)
	}
	// d joins: three move to it, from those with more than their share.
	back := Assign(servers, []string{"a", "b", "d"}, func(s string) string { return two[s] })
	if m, n := moved(two, back), count(back); m != 3 || n["d"] != 3 {
		t.Fatalf("d joined: %d moved, %v", m, n)
	}
}

// sharedOwners is replica id's Owners of servers on table, with its row
// in rows (which the others share) beaten once; every probe answers.
func sharedOwners(t *testing.T, table *fakeLeases, rows *fakeReplicas, id string, servers []string) *Owners {
	t.Helper()
	reg := NewRegistry(rows, id, id+":1", "", quiet)
	reg.Beat(t.Context())
	table.mu.Lock()
	table.addrs[id] = id + ":1"
	table.mu.Unlock()
	return NewOwners(table, reg, id, func() []string { return servers }, func(context.Context, Lease) bool { return true }, quiet)
}

// TestOwnersSpread: three replicas on one table, the first of which
// claimed every server alone; once the others are live, servers are
// handed over until each runs its share, each served by the one that gave
// it up until the new owner has it.
func TestOwnersSpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := newFakeLeases()
		rows := &fakeReplicas{rows: map[string]Replica{}}
		var servers []string
		for i := range 9 {
			servers = append(servers, fmt.Sprintf("s%d", i))
		}
		mk := func(id string) *Owners { return sharedOwners(t, table, rows, id, servers) }
		a := mk("a")
		a.Claim(t.Context())
		if len(a.Held()) != 9 {
			t.Fatalf("the first replica holds %d", len(a.Held()))
		}
		b, c := mk("b"), mk("c")
		for _, o := range []*Owners{a, b, c} {
			o.reg.Beat(t.Context())
		}
		handedServed := false
		for range 30 {
			for _, o := range []*Owners{a, b, c} {
				o.Claim(t.Context())
			}
			for _, s := range servers {
				a.mu.Lock()
				h, given := a.handed[s]
				a.mu.Unlock()
				if given && a.Owner(s) == "" {
					if p, err := a.Place(s); !p.Here || err != nil || h.token == 0 {
						t.Fatalf("a server handed over, not taken yet, is not served here: %+v %v", p, err)
					}
					handedServed = true
				}
			}
			time.Sleep(ClaimEvery)
		}
		if n := []int{len(a.Held()), len(b.Held()), len(c.Held())}; !slices.Equal(n, []int{3, 3, 3}) {
			t.Fatalf("held after spreading: %v", n)
		}
		if !handedServed {
			t.Fatal("no server was seen handed over and not yet taken")
		}
	})
}

// TestDrainWithNobodyToTake: a replica stopping while every other one is
// stopping too (or alone) does not wait for a taker that will not come:
// it returns at once, its leases held for Release; while another may
// take its servers, it hands them over and waits for that one. Before,
// replicas stopped together each waited the whole drainWait (10 s).
func TestDrainWithNobodyToTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := newFakeLeases()
		rows := &fakeReplicas{rows: map[string]Replica{}}
		servers := []string{"s0", "s1"}
		mk := func(id string) *Owners { return sharedOwners(t, table, rows, id, servers) }
		a := mk("a")
		a.Claim(t.Context())
		b := mk("b")
		a.reg.Beat(t.Context())
		if len(a.Held()) != 2 {
			t.Fatalf("a holds %v", a.Held())
		}
		serving := func(context.Context, Lease) bool { return true }

		// b is being stopped too: nobody takes a's servers.
		b.reg.Drain(t.Context())
		a.reg.Drain(t.Context())
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		a.Drain(ctx, serving)
		cancel()
		if d := time.Since(start); d > time.Second {
			t.Errorf("with every other replica stopping, the drain waited %s", d)
		}
		if len(a.Held()) != 2 {
			t.Errorf("a gave up %v with nobody to take them", a.Held())
		}

		// A live replica that is not stopping takes them.
		c := mk("c")
		a.reg.Beat(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			a.Drain(ctx, serving)
		}()
		for range 5 {
			time.Sleep(ClaimEvery)
			c.Claim(t.Context())
		}
		<-done
		if len(c.Held()) != 2 || len(a.Held()) != 0 {
			t.Errorf("after the drain a holds %v, c %v", a.Held(), c.Held())
		}
	})
}
