package peer

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Lease timing (R-TEAM-3). Every replica claims every ClaimEvery the
// leases of the stdio servers it has, each claim waiting ClaimEvery at
// most; a lease lasts LeaseTTL from its last claim by the database's
// clock. A replica that could not renew refuses forwarded calls from
// LeaseTTL - fenceMargin after the start of its last successful claim,
// and drops the leases (its servers are stopped) by a ClaimEvery later
// at most, a second before another replica can take them; a dead
// replica's servers are taken within LeaseTTL + ClaimEvery.
const (
	ClaimEvery  = time.Second
	LeaseTTL    = 6 * time.Second
	fenceMargin = 2 * time.Second
)

// TokenHeader names, on a forwarded call, the fencing token of the lease
// the caller believes the owner holds: an owner whose token differs (it
// lost the lease, or won it anew) refuses, rather than serve as a stale
// owner.
const TokenHeader = "Plexus-Lease-Token"

// Lease is who runs a server: the owning replica, its internal address,
// and the fencing token, which grows at every change of owner.
type Lease struct {
	Owner string
	Addr  string
	Token int64
}

// LeaseTable is where the leases are kept: the shared database.
type LeaseTable interface {
	// Claim takes or renews self's leases of servers where it can, for
	// ttl, and returns every one's lease as it stands after.
	Claim(ctx context.Context, servers []string, self string, ttl time.Duration) (map[string]Lease, error)
	Release(ctx context.Context, servers []string, self string) error
}

// ErrNoOwner is Place's answer for a server no replica holds now.
var ErrNoOwner = errors.New("no replica runs it now: it moves to another replica within seconds")

// Owners keeps this replica's view of who runs each stdio server: its
// claims, and what they returned.
type Owners struct {
	self    string
	table   LeaseTable
	creds   Credentials
	wanted  func() []string      // the stdio servers to hold leases of
	changed func(names []string) // told the servers whose lease changed
	log     *slog.Logger
	poke    chan struct{} // a lease changed owner: claim now (Poke)

	mu     sync.Mutex
	leases map[string]Lease     // by server; guarded by mu
	extra  map[string]time.Time // servers claimed before the settings have them, since; guarded by mu
	until  time.Time            // this replica's leases are safe to serve until; guarded by mu
	failed bool                 // the last claim failed; guarded by mu
}

// NewOwners returns the owners view of replica self.
func NewOwners(table LeaseTable, creds Credentials, self string, wanted func() []string, log *slog.Logger) *Owners {
	return &Owners{self: self, table: table, creds: creds, wanted: wanted, log: log, leases: map[string]Lease{},
		extra: map[string]time.Time{}, poke: make(chan struct{}, 1)}
}

// OnChange has f told the servers whose lease changed; set it before Run.
func (o *Owners) OnChange(f func(names []string)) { o.changed = f }

// Poke has Run claim at once: another replica announced that a lease
// changed owner (or gave one up).
func (o *Owners) Poke() {
	select {
	case o.poke <- struct{}{}:
	default:
	}
}

// Run claims every ClaimEvery, and at once when poked, until ctx is
// done; and drops this
// replica's leases the moment they are no longer safe, also when no
// claim is under way to notice.
func (o *Owners) Run(ctx context.Context) error {
	t := time.NewTicker(ClaimEvery)
	defer t.Stop()
	fence := time.NewTimer(o.safeFor())
	defer fence.Stop()
	for {
		var changed []string
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			changed = o.Claim(ctx)
		case <-o.poke:
			changed = o.Claim(ctx)
		case <-fence.C:
			o.mu.Lock()
			changed = o.dropLocked()
			o.mu.Unlock()
		}
		fence.Reset(o.safeFor())
		if len(changed) > 0 && o.changed != nil {
			o.changed(changed)
		}
	}
}

// safeFor is how long this replica's leases are still safe to serve, at
// least ClaimEvery (there is nothing to drop before the next claim).
func (o *Owners) safeFor() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d := time.Until(o.until); d > 0 {
		return d
	}
	return ClaimEvery
}

// dropLocked drops this replica's leases once they are no longer safe,
// and returns their servers.
func (o *Owners) dropLocked() []string {
	if time.Now().Before(o.until) {
		return nil
	}
	var dropped []string
	for name, l := range o.leases {
		if l.Owner == o.self {
			delete(o.leases, name)
			dropped = append(dropped, name)
		}
	}
	slices.Sort(dropped)
	return dropped
}

// Claim makes one round of claims and returns the servers whose lease
// changed. When claims fail past the time this replica's leases are safe,
// it drops them: it must stop running those servers before another
// replica can take them.
func (o *Owners) Claim(ctx context.Context) []string {
	names := o.wanted()
	o.mu.Lock()
	for name, since := range o.extra {
		if slices.Contains(names, name) || time.Since(since) > 30*time.Second {
			delete(o.extra, name)
		} else {
			names = append(names, name)
		}
	}
	o.mu.Unlock()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, ClaimEvery)
	got, err := o.table.Claim(cctx, names, o.self, LeaseTTL)
	cancel()
	o.mu.Lock()
	defer o.mu.Unlock()
	var changed []string
	if err != nil {
		if !o.failed && ctx.Err() == nil {
			o.log.Warn("leases: a claim failed: this replica stops its stdio servers if it cannot renew in time", "err", err)
		}
		o.failed = true
		return o.dropLocked()
	}
	if o.failed {
		o.log.Info("leases: claims succeed again")
		o.failed = false
	}
	o.until = start.Add(LeaseTTL - fenceMargin)
	// A server claimed alone while this round was under way (claimNow)
	// is not in got: keep what that claim found.
	for name := range o.extra {
		if _, ok := got[name]; !ok {
			if l, had := o.leases[name]; had {
				got[name] = l
			}
		}
	}
	for name, l := range got {
		if old, ok := o.leases[name]; !ok || old != l {
			changed = append(changed, name)
			if l.Owner == o.self {
				o.log.Info("leases: this replica runs the server now", "server", name, "token", l.Token)
			}
		}
	}
	for name := range o.leases {
		if _, ok := got[name]; !ok {
			changed = append(changed, name)
		}
	}
	o.leases = got
	slices.Sort(changed)
	return changed
}

// claimNow claims server's lease alone, for a server the settings do not
// have yet (it is being added), and keeps claiming it with the others.
func (o *Owners) claimNow(server string) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), ClaimEvery)
	defer cancel()
	got, err := o.table.Claim(ctx, []string{server}, o.self, LeaseTTL)
	if err != nil {
		o.log.Warn("leases: a claim failed", "server", server, "err", err)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leases[server] = got[server]
	o.extra[server] = start
	if got[server].Owner == o.self && o.until.IsZero() {
		o.until = start.Add(LeaseTTL - fenceMargin)
	}
}

// Mine reports the fencing token of this replica's lease of server, if
// it holds one it may serve under now.
func (o *Owners) Mine(server string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.leases[server]
	if !ok || l.Owner != o.self || !time.Now().Before(o.until) {
		return 0, false
	}
	return l.Token, true
}

// Owner returns the replica that runs server, "" when none does now.
func (o *Owners) Owner(server string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.leases[server].Owner
}

// Place is where server runs (host.Placement): "" for here; else the
// owner's face for it on the internal channel, with the channel's
// credential and the lease's token. A server it has no lease of yet (one
// being added) it claims at once.
func (o *Owners) Place(server string) (url string, headers http.Header, owner string, err error) {
	o.mu.Lock()
	_, known := o.leases[server]
	o.mu.Unlock()
	if !known {
		o.claimNow(server)
	}
	if _, mine := o.Mine(server); mine {
		return "", nil, "", nil
	}
	o.mu.Lock()
	l, ok := o.leases[server]
	o.mu.Unlock()
	if !ok || l.Owner == o.self || l.Addr == "" {
		return "", nil, "", ErrNoOwner
	}
	h := http.Header{}
	h.Set(Header, o.creds.send)
	h.Set(TokenHeader, strconv.FormatInt(l.Token, 10))
	return "http://" + l.Addr + ServerPath + server, h, l.Owner, nil
}

// Held returns the servers this replica holds leases of.
func (o *Owners) Held() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for name, l := range o.leases {
		if l.Owner == o.self {
			out = append(out, name)
		}
	}
	return out
}

// Release gives up this replica's leases at its clean stop, once it has
// stopped its servers, so that others take them at once.
func (o *Owners) Release(ctx context.Context) {
	held := o.Held()
	if len(held) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := o.table.Release(ctx, held, o.self); err != nil {
		o.log.Warn("leases: could not release this replica's leases: they move when they expire", "err", err)
	}
}

// ServerPath is where a replica serves each stdio server it runs on the
// internal channel: ServerPath + name.
const ServerPath = "/server/"

// ServeOwned serves a forwarded request for a server this replica runs,
// through serve, if the token it names is that of this replica's live
// lease; else 409, and the caller learns the new owner at its next claim.
func (o *Owners) ServeOwned(serve func(w http.ResponseWriter, r *http.Request, server string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server := r.PathValue("server")
		tok, mine := o.Mine(server)
		if !mine || r.Header.Get(TokenHeader) != strconv.FormatInt(tok, 10) {
			http.Error(w, "this replica does not hold that server's lease under that token", http.StatusConflict)
			return
		}
		serve(w, r, server)
	})
}
