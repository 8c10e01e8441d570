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

// Lease timing (R-TEAM-3). Every replica claims every ClaimEvery, each
// claim waiting ClaimEvery at most. An owner renews its leases at each
// claim, and the others watch the renewals (a count in the lease's row),
// each by its own clock: a lease is taken from its owner only when its
// renewals stopped for LeaseTTL, as seen by the taker through claims that
// all succeeded, and its owner does not answer on the channel (it is
// dead, stopped, or cut off); or when they stopped for HoldTTL, whatever
// the owner says. So a database that stops or stalls moves nothing: no
// replica sees a renewal stop while it cannot read the table, and once
// the database is back the owners renew within a second.
//
// An owner serves a lease it could renew LeaseTTL - fenceMargin after the
// start of its last successful claim; while its claims fail (the database
// is away, or it alone cannot reach it) it serves on until HoldTTL -
// fenceMargin, since nobody takes a lease from an owner that answers on
// the channel before HoldTTL. Past that it stops its servers.
const (
	ClaimEvery  = time.Second
	LeaseTTL    = 6 * time.Second
	HoldTTL     = 60 * time.Second
	fenceMargin = 2 * time.Second
)

// Spreading. Each replica computes where every stdio server should run
// from the same inputs (the servers of the settings, the live replicas,
// the leases as they stand), so that they agree without talking: a
// server stays where it runs unless its owner has more than its share,
// the rest go by rendezvous hashing to a replica under its share. An
// owner hands a server it should not have over (gives up its lease, upon
// which the replica meant for it takes it at once) once it has held it
// for handoverAfter renewals, at most maxMoves a round; it serves it on
// until that replica runs it (handoverGrace at most). A free lease that
// the replica meant for it has not taken within freeGrace is taken by
// any.
const (
	handoverAfter = 5
	maxMoves      = 3
	handoverGrace = 15 * time.Second
	freeGrace     = 2 * time.Second
)

// TokenHeader names, on a request for a server another replica runs, the
// fencing token of the lease the caller believes that replica holds: an
// owner whose token differs (it lost the lease, or won it anew) refuses,
// rather than serve as a stale owner.
const TokenHeader = "Plexus-Lease-Token"

// Lease is a row of the lease table: who runs a server (Owner "" for
// nobody), its fencing token, which grows at every change of owner, how
// often its owner renewed it, whether the store's key sealed it (one it
// did not is taken for free), and the owner's channel address and
// certificate.
type Lease struct {
	Server   string
	Owner    string
	Token    int64
	Renewals int64
	Sealed   bool
	Addr     string
	FP       string
}

// LeaseTable is where the leases are kept: the shared database.
type LeaseTable interface {
	// Claim decides on each of servers' leases in one transaction: take
	// says whether self should hold it (renewed when it does, taken
	// otherwise). It returns every lease as it stands after.
	Claim(ctx context.Context, self string, servers []string, ttl time.Duration, take func(Lease) bool) (map[string]Lease, error)
	Release(ctx context.Context, servers []string, self string) error
}

// claimTries is how many times Place claims a server being added before
// it answers ErrNoOwner.
const claimTries = 3

// ErrNoOwner is Place's answer for a server no replica holds now.
var ErrNoOwner = errors.New("no replica runs it now: it moves to another replica within seconds")

// Placement is where a server runs as this replica sees it: here, at
// another replica (Owner, at Addr, under Token), or nowhere (neither).
type Placement struct {
	Here  bool
	Owner string
	Addr  string
	Token int64
}

// observation is a lease as this replica last saw it change.
type observation struct {
	owner           string
	token, renewals int64
	sealed          bool
	since           time.Time
}

// handover is a lease this replica gave up for another to take: it
// serves it under token until then.
type handover struct {
	token int64
	until time.Time
}

// Owners keeps this replica's view of who runs each stdio server: its
// claims, and what they returned.
type Owners struct {
	self    string
	table   LeaseTable
	reg     *Registry
	wanted  func() []string      // the stdio servers of the settings
	changed func(names []string) // told the servers whose placement changed
	alive   func(ctx context.Context, l Lease) bool
	log     *slog.Logger
	poke    chan struct{} // a lease changed owner: claim now (Poke)

	mu       sync.Mutex
	leases   map[string]Lease       // by server, as last claimed; guarded by mu
	extra    map[string]time.Time   // servers claimed before the settings have them, since; guarded by mu
	seen     map[string]observation // by server; guarded by mu
	placed   map[string]Placement   // what the host was last told or asked; guarded by mu
	handed   map[string]handover    // by server; guarded by mu
	lastGood time.Time              // the start of the last successful claim; guarded by mu
	failing  bool                   // the last claim failed; guarded by mu
	draining bool                   // guarded by mu
}

// NewOwners returns the owners view of replica self. alive asks a lease's
// owner on the channel whether it runs (Prober).
func NewOwners(table LeaseTable, reg *Registry, self string, wanted func() []string, alive func(context.Context, Lease) bool, log *slog.Logger) *Owners {
	return &Owners{self: self, table: table, reg: reg, wanted: wanted, alive: alive, log: log, poke: make(chan struct{}, 1),
		leases: map[string]Lease{}, extra: map[string]time.Time{}, seen: map[string]observation{},
		placed: map[string]Placement{}, handed: map[string]handover{}}
}

// OnChange has f told the servers whose placement changed; set it before
// Run.
func (o *Owners) OnChange(f func(names []string)) { o.changed = f }

// Poke has Run claim at once: another replica announced that a lease
// changed owner (or was given up).
func (o *Owners) Poke() {
	select {
	case o.poke <- struct{}{}:
	default:
	}
}

// Run claims every ClaimEvery, and at once when poked, until ctx is
// done; and tells the host the moment this replica's leases stop being
// safe to serve, also when no claim is under way to notice.
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
			changed = o.diffLocked()
			o.mu.Unlock()
		}
		fence.Reset(o.safeFor())
		o.tell(changed)
	}
}

func (o *Owners) tell(changed []string) {
	if len(changed) > 0 && o.changed != nil {
		o.changed(changed)
	}
}

// safeUntilLocked is until when this replica may serve its leases.
func (o *Owners) safeUntilLocked() time.Time {
	if o.lastGood.IsZero() {
		return time.Time{}
	}
	if o.failing {
		return o.lastGood.Add(HoldTTL - fenceMargin)
	}
	return o.lastGood.Add(LeaseTTL - fenceMargin)
}

// safeFor is how long until this replica's leases stop being safe, at
// least ClaimEvery (there is nothing to drop before the next claim).
func (o *Owners) safeFor() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d := time.Until(o.safeUntilLocked()); d > 0 {
		return d
	}
	return ClaimEvery
}

// Claim makes one round of claims and returns the servers whose
// placement changed.
func (o *Owners) Claim(ctx context.Context) []string {
	wanted := o.wanted()
	names := slices.Clone(wanted)
	o.mu.Lock()
	for name, since := range o.extra {
		if slices.Contains(names, name) || time.Since(since) > 30*time.Second {
			delete(o.extra, name)
		} else {
			names = append(names, name)
		}
	}
	live, known := o.reg.Live()
	assign := o.assignLocked(wanted, live)
	suspects := o.suspectsLocked()
	o.mu.Unlock()
	dead := map[string]bool{}
	for owner, l := range suspects {
		dead[owner] = !o.alive(ctx, l)
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, ClaimEvery)
	got, err := o.table.Claim(cctx, o.self, names, HoldTTL, func(l Lease) bool { return o.decide(l, assign, dead) })
	cancel()
	o.mu.Lock()
	if err != nil {
		if !o.failing && ctx.Err() == nil {
			o.log.Warn("leases: a claim failed: this replica serves on what it runs while no other can take it", "err", err)
		}
		o.failing = true
		clear(o.seen) // what was seen before is no ground to take a lease after
		changed := o.diffLocked()
		o.mu.Unlock()
		return changed
	}
	if o.failing {
		o.log.Info("leases: claims succeed again")
		o.failing = false
	}
	o.lastGood = start
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
		if old := o.leases[name]; l.Owner == o.self && (old.Owner != o.self || old.Token != l.Token) {
			o.log.Info("leases: this replica runs the server now", "server", name, "token", l.Token)
		}
	}
	o.leases = got
	var moves []string
	if known {
		moves = o.movesLocked(assign)
	}
	changed := o.diffLocked()
	o.mu.Unlock()
	if len(moves) > 0 {
		o.handOver(ctx, moves)
	}
	return changed
}

// decide says whether this replica should hold lease l (Claim's take).
func (o *Owners) decide(l Lease, assign map[string]string, dead map[string]bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	ob, ok := o.seen[l.Server]
	if !ok || ob.owner != l.Owner || ob.token != l.Token || ob.renewals != l.Renewals || ob.sealed != l.Sealed {
		ob = observation{owner: l.Owner, token: l.Token, renewals: l.Renewals, sealed: l.Sealed, since: now}
		o.seen[l.Server] = ob
	}
	age := now.Sub(ob.since)
	switch {
	case l.Owner == o.self && l.Sealed:
		return true
	case o.draining:
		return false
	case l.Owner == "" || !l.Sealed:
		if _, mine := o.handed[l.Server]; mine && age < freeGrace {
			return false // given up for another to take
		}
		return assign[l.Server] == o.self || age >= freeGrace
	}
	return age >= HoldTTL || age >= LeaseTTL && dead[l.Owner]
}

// suspectsLocked are the owners of leases whose renewals this replica has
// seen stopped for LeaseTTL: they are asked whether they still run.
func (o *Owners) suspectsLocked() map[string]Lease {
	out := map[string]Lease{}
	for name, ob := range o.seen {
		if ob.owner != "" && ob.owner != o.self && ob.sealed && time.Since(ob.since) >= LeaseTTL {
			out[ob.owner] = o.leases[name]
		}
	}
	return out
}

// assignLocked is where each of servers should run, by the live replicas
// (those not being stopped, and this one unless it is), keeping each
// where it runs up to its owner's share.
func (o *Owners) assignLocked(servers []string, live map[string]Replica) map[string]string {
	var ids []string
	for id, r := range live {
		if !r.Draining && id != o.self {
			ids = append(ids, id)
		}
	}
	if !o.draining {
		ids = append(ids, o.self)
	}
	return Assign(servers, ids, func(s string) string { return o.leases[s].Owner })
}

// Assign spreads servers over replicas: each stays with its current
// owner (current(s), "" for none) while that owner is among replicas and
// under its share (the servers divided by the replicas, rounded up); the
// others go, in the order of their names, to the replica that ranks
// highest for them (rendezvous hashing) among those under their share.
// Every replica computes the same from the same inputs.
func Assign(servers, replicas []string, current func(string) string) map[string]string {
	out := map[string]string{}
	if len(replicas) == 0 {
		return out
	}
	servers = slices.Sorted(slices.Values(servers))
	share := (len(servers) + len(replicas) - 1) / len(replicas)
	load := map[string]int{}
	var rest []string
	for _, s := range servers {
		if c := current(s); c != "" && slices.Contains(replicas, c) && load[c] < share {
			out[s] = c
			load[c]++
		} else {
			rest = append(rest, s)
		}
	}
	for _, s := range rest {
		best, bestRank := "", uint64(0)
		for _, r := range replicas {
			if k := rank(s, r); load[r] < share && (best == "" || k > bestRank || k == bestRank && r < best) {
				best, bestRank = r, k
			}
		}
		out[s] = best
		load[best]++
	}
	return out
}

// rank is server's rendezvous hash on replica (FNV-1a 64).
func rank(server, replica string) uint64 {
	h := uint64(14695981039346656037)
	for _, s := range []string{server, "\x00", replica} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
	}
	return h
}

// movesLocked are the leases this replica should hand over now: held for
// handoverAfter renewals, meant for another live replica; all of them
// while it is being stopped.
func (o *Owners) movesLocked(assign map[string]string) []string {
	var names, out []string
	for name := range o.leases {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		l := o.leases[name]
		if l.Owner != o.self {
			continue
		}
		to := assign[name]
		if o.draining || to != "" && to != o.self && l.Renewals >= handoverAfter && len(out) < maxMoves {
			out = append(out, name)
		}
	}
	return out
}

// handOver gives up the leases of servers for the replicas meant for
// them, and serves them on until those take them.
func (o *Owners) handOver(ctx context.Context, servers []string) {
	rctx, cancel := context.WithTimeout(ctx, ClaimEvery)
	defer cancel()
	if err := o.table.Release(rctx, servers, o.self); err != nil {
		o.log.Warn("leases: could not hand servers over", "servers", servers, "err", err)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, name := range servers {
		l := o.leases[name]
		o.handed[name] = handover{token: l.Token, until: time.Now().Add(handoverGrace)}
		o.seen[name] = observation{token: l.Token, since: time.Now()} // free from now
		l.Owner, l.Renewals = "", 0
		o.leases[name] = l
	}
	o.log.Info("leases: servers handed over to spread them", "servers", servers)
}

// placementLocked is where server runs as this replica sees it now.
func (o *Owners) placementLocked(server string) Placement {
	l, ok := o.leases[server]
	if h, given := o.handed[server]; given && time.Now().Before(h.until) && (!ok || l.Owner == "" || l.Owner == o.self) {
		return Placement{Here: true, Token: h.token} // until the replica meant for it takes it
	}
	switch {
	case !ok:
		return Placement{}
	case l.Owner == o.self && l.Sealed && time.Now().Before(o.safeUntilLocked()):
		return Placement{Here: true, Token: l.Token}
	case l.Owner != "" && l.Owner != o.self && l.Sealed && l.Addr != "":
		return Placement{Owner: l.Owner, Addr: l.Addr, Token: l.Token}
	}
	return Placement{}
}

// diffLocked returns the servers whose placement differs from what the
// host was last told, and records the new ones.
func (o *Owners) diffLocked() []string {
	now := time.Now()
	for name, h := range o.handed {
		if now.After(h.until) {
			delete(o.handed, name)
		}
	}
	names := map[string]bool{}
	for name := range o.leases {
		names[name] = true
	}
	for name := range o.placed {
		names[name] = true
	}
	var changed []string
	for name := range names {
		p := o.placementLocked(name)
		if old, ok := o.placed[name]; !ok && p == (Placement{}) || ok && old == p {
			continue
		}
		o.placed[name] = p
		changed = append(changed, name)
	}
	slices.Sort(changed)
	return changed
}

// claimNow claims server's lease alone, for a server the settings do not
// have yet (it is being added): taken if free, and kept claiming with the
// others. It reports whether the database answered the claim.
func (o *Owners) claimNow(server string) bool {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), ClaimEvery)
	defer cancel()
	got, err := o.table.Claim(ctx, o.self, []string{server}, HoldTTL, func(l Lease) bool {
		return l.Owner == o.self && l.Sealed || l.Owner == "" || !l.Sealed
	})
	if err != nil {
		o.log.Warn("leases: a claim failed", "server", server, "err", err)
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leases[server] = got[server]
	o.extra[server] = start
	if got[server].Owner == o.self && o.lastGood.IsZero() {
		o.lastGood = start
	}
	return true
}

// Place is where server runs (host.Placement); the host builds it so. A
// server it has no lease of yet (one being added) it claims at once.
func (o *Owners) Place(server string) (Placement, error) {
	o.mu.Lock()
	_, known := o.leases[server]
	o.mu.Unlock()
	// A slow database (a claim is given ClaimEvery) is asked again: a
	// server being added is not refused for one slow answer.
	for try := 0; !known && try < claimTries; try++ {
		if o.claimNow(server) {
			break
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.placementLocked(server)
	o.placed[server] = p
	if !p.Here && p.Owner == "" {
		return p, ErrNoOwner
	}
	return p, nil
}

// Mine reports the fencing token of this replica's lease of server, if
// it holds one it may serve under now.
func (o *Owners) Mine(server string) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l, ok := o.leases[server]
	if !ok || l.Owner != o.self || !l.Sealed || !time.Now().Before(o.safeUntilLocked()) {
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
	slices.Sort(out)
	return out
}

// Drain hands every server this replica runs over to the others, at its
// clean stop, and waits (until ctx is done) until they have taken them
// and each new owner runs its server (serving reports so of an owner):
// meanwhile it serves them on. The other replicas move their connections
// there after that; the channel's stop waits for them (internal/daemon).
// With no other replica to take them (the last one, or all stopping at
// once) it does not wait.
func (o *Owners) Drain(ctx context.Context, serving func(context.Context, Lease) bool) {
	o.mu.Lock()
	o.draining = true
	o.mu.Unlock()
	held := o.Held()
	if len(held) == 0 || !o.othersTake() {
		return
	}
	o.handOver(ctx, held)
	running := map[string]bool{}
	for i := 1; ; i++ {
		o.Claim(ctx) // takes nothing now; sees who took what
		o.mu.Lock()
		var taken []Lease
		for _, name := range held {
			if l := o.leases[name]; l.Owner != "" && l.Owner != o.self && !running[name] {
				taken = append(taken, l)
			}
		}
		o.mu.Unlock()
		for _, l := range taken {
			running[l.Server] = serving(ctx, l)
		}
		n := 0
		for _, ok := range running {
			if ok {
				n++
			}
		}
		if n == len(held) {
			return
		}
		// Every second, with the rows read again: once every other
		// replica is being stopped too (all stop at once), nobody will
		// take the rest; they are given up as this one stops (Release).
		if i%10 == 0 {
			o.reg.Beat(ctx)
			if !o.othersTake() {
				o.log.Info("leases: every other replica is stopping too: the servers not taken yet stop with this one", "servers", len(held)-n)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// othersTake reports whether a replica other than this one, live and not
// being stopped, may take servers, by the rows last read.
func (o *Owners) othersTake() bool {
	live, _ := o.reg.Live()
	for id, r := range live {
		if id != o.self && !r.Draining {
			return true
		}
	}
	return false
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

// ServeOwned serves a request for a server this replica runs, through
// serve, if the token it names is that of this replica's lease: when it
// runs the server's process itself (local), else it answers that it is
// starting it; or of a lease it handed over and serves on until the
// replica meant for it runs it. Anything else is 409. A refusal carries
// RefusedHeader: the request was not made, and the caller may make it
// where the server runs now.
func (o *Owners) ServeOwned(local func(server string) bool, serve func(w http.ResponseWriter, r *http.Request, server string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server := r.PathValue("server")
		got := r.Header.Get(TokenHeader)
		tok, mine := o.Mine(server)
		o.mu.Lock()
		h, given := o.handed[server]
		o.mu.Unlock()
		switch {
		case mine && got == strconv.FormatInt(tok, 10) && local(server):
			serve(w, r, server)
		case mine && got == strconv.FormatInt(tok, 10):
			refuse(w, http.StatusServiceUnavailable, "this replica is starting that server")
		case given && time.Now().Before(h.until) && got == strconv.FormatInt(h.token, 10):
			serve(w, r, server)
		default:
			refuse(w, http.StatusConflict, "this replica does not hold that server's lease under that token")
		}
	})
}

func refuse(w http.ResponseWriter, code int, why string) {
	w.Header().Set(RefusedHeader, why)
	http.Error(w, why, code)
}
