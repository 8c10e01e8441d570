package peer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeLeases is a LeaseTable in memory that can be made to fail.
type fakeLeases struct {
	mu     sync.Mutex
	leases map[string]Lease
	down   bool
	claims int
	// hold, if set, holds a claim of no servers until it is closed.
	hold chan struct{}
}

func (f *fakeLeases) Claim(_ context.Context, servers []string, self string, _ time.Duration) (map[string]Lease, error) {
	f.mu.Lock()
	hold := f.hold
	f.claims++
	f.mu.Unlock()
	if hold != nil && len(servers) == 0 {
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errors.New("the database is away")
	}
	out := map[string]Lease{}
	for _, s := range servers {
		l, ok := f.leases[s]
		if !ok {
			l = Lease{Owner: self, Addr: "self:1", Token: 1}
			f.leases[s] = l
		}
		out[s] = l
	}
	return out, nil
}

func (f *fakeLeases) Release(context.Context, []string, string) error { return nil }

// TestOwnersFence: a replica serves a server only under the token of the
// lease it holds; when its claims fail past the lease's safe time it
// drops the lease (its server is stopped) before the lease can expire;
// another replica's server is placed at that replica with the token.
func TestOwnersFence(t *testing.T) {
	table := &fakeLeases{leases: map[string]Lease{"theirs": {Owner: "other", Addr: "10.0.0.2:7781", Token: 7}}}
	creds := NewCredentials([][]byte{[]byte("k")})
	o := NewOwners(table, creds, "self", func() []string { return []string{"mine", "theirs"} }, slog.New(slog.DiscardHandler))
	if got := o.Claim(t.Context()); !slices.Equal(got, []string{"mine", "theirs"}) {
		t.Fatalf("first claim changed %v", got)
	}
	if tok, ok := o.Mine("mine"); !ok || tok != 1 {
		t.Fatalf("mine: %d, %v", tok, ok)
	}
	if url, _, _, err := o.Place("mine"); url != "" || err != nil {
		t.Fatalf("a server this replica runs placed at %q (%v)", url, err)
	}
	url, hdr, owner, err := o.Place("theirs")
	if err != nil || url != "http://10.0.0.2:7781/server/theirs" || owner != "other" || hdr.Get(TokenHeader) != "7" || hdr.Get(Header) != creds.send {
		t.Fatalf("theirs placed at %q by %q with %v (%v)", url, owner, hdr, err)
	}

	served := 0
	h := o.ServeOwned(func(w http.ResponseWriter, r *http.Request, server string) { served++ })
	mux := http.NewServeMux()
	mux.Handle(ServerPath+"{server}", h)
	call := func(server string, token int64) int {
		req := httptest.NewRequest("POST", ServerPath+server, nil)
		req.Header.Set(TokenHeader, strconv.FormatInt(token, 10))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		io.Copy(io.Discard, rec.Body)
		return rec.Code
	}
	if code := call("mine", 1); code != http.StatusOK || served != 1 {
		t.Fatalf("a call under the lease's token: %d", code)
	}
	if code := call("mine", 2); code != http.StatusConflict {
		t.Fatalf("a call under another token: %d, want 409", code)
	}
	if code := call("theirs", 7); code != http.StatusConflict {
		t.Fatalf("a call for a server another replica runs: %d, want 409", code)
	}

	// The database goes away: within the safe time nothing changes; past
	// it, this replica's own lease is dropped, and no call is served.
	table.mu.Lock()
	table.down = true
	table.mu.Unlock()
	if got := o.Claim(t.Context()); len(got) != 0 {
		t.Fatalf("a failed claim within the safe time changed %v", got)
	}
	o.mu.Lock()
	o.until = time.Now().Add(-time.Millisecond) // as if LeaseTTL - fenceMargin had passed
	o.mu.Unlock()
	if got := o.Claim(t.Context()); !slices.Equal(got, []string{"mine"}) {
		t.Fatalf("past the safe time the claim changed %v, want [mine]", got)
	}
	if _, ok := o.Mine("mine"); ok {
		t.Fatal("still serving a lease it could not renew")
	}
	if code := call("mine", 1); code != http.StatusConflict || served != 1 {
		t.Fatalf("a call after the lease was dropped: %d", code)
	}
	if _, _, _, err := o.Place("mine"); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("placing a server no replica holds: %v", err)
	}
	// A claim takes ClaimEvery at most: the lease is dropped by then,
	// still before it can expire.
	if LeaseTTL-fenceMargin+ClaimEvery >= LeaseTTL || LeaseTTL+ClaimEvery >= 10*time.Second {
		t.Fatal("the lease timing no longer stops an owner before its lease expires, or moves a server within 10 s")
	}
}

// TestOwnersFenceTimer: Run drops a lease the moment it stops being
// safe, not at the next claim (on the bubble's clock: the moment is
// exact, whatever the machine's load).
func TestOwnersFenceTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		table := &fakeLeases{leases: map[string]Lease{}}
		o := NewOwners(table, NewCredentials([][]byte{[]byte("k")}), "self", func() []string { return []string{"mine"} }, slog.New(slog.DiscardHandler))
		o.Claim(t.Context())
		table.mu.Lock()
		table.down = true
		table.mu.Unlock()
		const safe = 50 * time.Millisecond
		o.mu.Lock()
		o.until = time.Now().Add(safe)
		o.mu.Unlock()
		dropped := make(chan []string, 1)
		o.OnChange(func(names []string) { dropped <- names })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		start := time.Now()
		go func() { done <- o.Run(ctx) }()
		select {
		case names := <-dropped:
			if !slices.Equal(names, []string{"mine"}) || time.Since(start) != safe {
				t.Fatalf("dropped %v after %s, want at %s", names, time.Since(start), safe)
			}
		case <-time.After(ClaimEvery):
			t.Fatal("the lease was not dropped when it stopped being safe")
		}
		cancel()
		<-done
	})
}

// TestOwnersPoke: a notice that a lease changed owner has Run claim at
// once, not at its next tick, and tell the new owner to the host.
func TestOwnersPoke(t *testing.T) {
	table := &fakeLeases{leases: map[string]Lease{"srv": {Owner: "other", Addr: "10.0.0.2:1", Token: 1}}}
	o := NewOwners(table, NewCredentials([][]byte{[]byte("k")}), "self", func() []string { return []string{"srv"} }, slog.New(slog.DiscardHandler))
	o.Claim(t.Context())
	changed := make(chan []string, 1)
	o.OnChange(func(names []string) { changed <- names })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- o.Run(ctx) }()
	table.mu.Lock()
	table.leases["srv"] = Lease{Owner: "third", Addr: "10.0.0.3:1", Token: 2}
	table.mu.Unlock()
	start := time.Now()
	o.Poke()
	select {
	case names := <-changed:
		if !slices.Equal(names, []string{"srv"}) || o.Owner("srv") != "third" {
			t.Fatalf("changed %v, owner %q", names, o.Owner("srv"))
		}
	case <-time.After(ClaimEvery / 2):
		t.Fatal("a poke did not make a claim at once")
	}
	t.Logf("a poke to a new owner known: %s", time.Since(start))
	cancel()
	<-done
}

// TestOwnersClaimDuringRound: a server claimed alone (being added) while
// a round of claims that does not name it is under way stays held when
// that round ends, and is not reported changed.
func TestOwnersClaimDuringRound(t *testing.T) {
	hold := make(chan struct{})
	table := &fakeLeases{leases: map[string]Lease{}, hold: hold}
	o := NewOwners(table, NewCredentials([][]byte{[]byte("k")}), "self", func() []string { return nil }, slog.New(slog.DiscardHandler))
	round := make(chan []string)
	go func() { round <- o.Claim(t.Context()) }()
	for {
		table.mu.Lock()
		n := table.claims
		table.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if url, _, _, err := o.Place("new"); url != "" || err != nil {
		t.Fatalf("a server being added placed at %q (%v), want here", url, err)
	}
	close(hold)
	if changed := <-round; len(changed) != 0 {
		t.Fatalf("the round reported %v changed", changed)
	}
	if tok, ok := o.Mine("new"); !ok || tok != 1 {
		t.Fatalf("after the round the new server is not held: %d, %v", tok, ok)
	}
}
