package peer

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// Timing of the heartbeats: a replica beats every BeatEvery, and one
// without a beat for DeadAfter is taken for gone when servers are spread
// (Owners). Sessions do not go by it: a session's replica is dialled at
// the address of its sealed row, and is gone when nothing answers there.
const (
	BeatEvery = 2 * time.Second
	DeadAfter = 6 * time.Second
)

// ErrGone is what Registry.Find says of a replica that has no row.
var ErrGone = errors.New("the replica is gone")

// Replica is one replica's row: its id, the address of its internal
// channel, the SHA-256 of its channel's certificate, and whether it is
// being stopped. Alive says it beat within DeadAfter.
type Replica struct {
	ID       string
	Addr     string
	FP       string
	Draining bool
	Alive    bool
}

// Table is where the replicas' rows are kept: the shared database
// (pgstore.Store), which trusts only rows the store's key sealed.
type Table interface {
	Beat(ctx context.Context, r Replica) error
	// Replicas returns every sealed row; Alive says it beat within within.
	Replicas(ctx context.Context, within time.Duration) (map[string]Replica, error)
	Leave(ctx context.Context, id string) error
}

// Registry is this replica's row in the Table, kept alive by Run, and the
// other replicas' rows, read at every beat and kept: while the database
// is away, the rows last read are used, so that sessions on other
// replicas are still reached.
type Registry struct {
	Self       string // this replica's id
	Advertised string // this replica's advertised internal address
	FP         string // its certificate's SHA-256

	table Table
	log   *slog.Logger

	mu       sync.Mutex
	known    map[string]Replica   // by id, as last read; guarded by mu
	missed   map[string]time.Time // ids looked up and not found, when; guarded by mu
	beating  bool                 // the last beat succeeded; guarded by mu
	draining bool                 // guarded by mu
	readAt   time.Time            // when known was read; guarded by mu
}

// NewRegistry returns the registry of replica self at addr, whose
// certificate's SHA-256 is fp, in table.
func NewRegistry(table Table, self, addr, fp string, log *slog.Logger) *Registry {
	return &Registry{Self: self, Advertised: addr, FP: fp, table: table, log: log, known: map[string]Replica{}, missed: map[string]time.Time{}, beating: true}
}

// Run beats every BeatEvery until ctx is done.
func (g *Registry) Run(ctx context.Context) error {
	t := time.NewTicker(BeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			g.Beat(ctx)
		}
	}
}

// Leave removes this replica's row at its clean stop, once it has handed
// its servers over, so that the others stop sending it requests at once.
func (g *Registry) Leave(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := g.table.Leave(ctx, g.Self); err != nil {
		g.log.Warn("internal channel: could not remove the replica's row", "err", err)
	}
}

// Drain marks this replica as being stopped, in its row at once: the
// others spread its servers over themselves and send it none.
func (g *Registry) Drain(ctx context.Context) {
	g.mu.Lock()
	g.draining = true
	g.mu.Unlock()
	g.Beat(ctx)
}

// Beat records one heartbeat and reads the others' rows; it logs only
// when beating fails or comes back (every BeatEvery would flood the log
// while the database is away).
func (g *Registry) Beat(ctx context.Context) {
	g.mu.Lock()
	me := Replica{ID: g.Self, Addr: g.Advertised, FP: g.FP, Draining: g.draining}
	g.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, BeatEvery)
	defer cancel()
	err := g.table.Beat(bctx, me)
	var rows map[string]Replica
	if err == nil {
		rows, err = g.table.Replicas(bctx, DeadAfter)
	}
	g.mu.Lock()
	was := g.beating
	g.beating = err == nil
	if err == nil {
		g.known, g.readAt = rows, time.Now()
	}
	g.mu.Unlock()
	switch {
	case err != nil && was && ctx.Err() == nil:
		g.log.Warn("internal channel: the heartbeat failed: this replica goes on with the rows it last read", "err", err)
	case err == nil && !was:
		g.log.Info("internal channel: the heartbeat is back")
	}
}

// Live returns the replicas that beat within DeadAfter by the rows last
// read, and whether those rows are recent (read within DeadAfter): when
// they are not, the database is away and nobody's liveness is known.
func (g *Registry) Live() (map[string]Replica, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]Replica{}
	for id, r := range g.known {
		if r.Alive {
			out[id] = r
		}
	}
	return out, time.Since(g.readAt) < DeadAfter
}

// missFor is how long an id looked up and not found is not looked up
// again: made-up session ids must not each cost a query.
const missFor = time.Second

// Find returns replica id's row: as last read, or read again when it was
// not there (a replica that started since). ErrGone when it has none;
// another error when the database cannot say.
func (g *Registry) Find(ctx context.Context, id string) (Replica, error) {
	g.mu.Lock()
	r, ok := g.known[id]
	at, missed := g.missed[id]
	g.mu.Unlock()
	if ok {
		return r, nil
	}
	if missed && time.Since(at) < missFor {
		return Replica{}, ErrGone
	}
	rows, err := g.table.Replicas(ctx, DeadAfter)
	if err != nil {
		return Replica{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.known, g.readAt = rows, time.Now()
	if r, ok := rows[id]; ok {
		return r, nil
	}
	if len(g.missed) > 1024 {
		clear(g.missed)
	}
	g.missed[id] = time.Now()
	return Replica{}, ErrGone
}

// Known returns every row last read, by id.
func (g *Registry) Known() map[string]Replica {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.known)
}
