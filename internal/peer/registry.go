package peer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Timing of the heartbeats: a replica beats every BeatEvery, and one
// without a beat for DeadAfter is taken for gone.
const (
	BeatEvery = 2 * time.Second
	DeadAfter = 6 * time.Second
)

// cacheFor is how long a looked-up address is used before it is looked
// up again: a replica that died is noticed within DeadAfter + cacheFor.
const cacheFor = BeatEvery

// ErrGone is what Registry.Addr says of a replica that is not alive.
var ErrGone = errors.New("the replica is gone")

// Table is where the replicas' addresses and heartbeats are kept: the
// shared database (pgstore.Store).
type Table interface {
	Beat(ctx context.Context, id, addr string) error
	// Replica returns id's address if it beat within the last within,
	// else the registry's noRow error.
	Replica(ctx context.Context, id string, within time.Duration) (string, error)
	Leave(ctx context.Context, id string) error
}

// Registry is this replica's entry in the Table, kept alive by Run, and
// the other replicas' addresses, looked up there and kept for cacheFor.
type Registry struct {
	Self       string // this replica's id
	Advertised string // this replica's advertised internal address

	table   Table
	noRow   error // what table returns for a replica without a live row
	log     *slog.Logger
	mu      sync.Mutex
	known   map[string]entry // by replica id; guarded by mu
	beating bool             // the last beat succeeded; guarded by mu
}

type entry struct {
	addr string // "" when the replica was gone
	at   time.Time
}

// NewRegistry returns the registry of replica self at addr in table;
// noRow is the error table's Replica returns for a replica without a live
// row.
func NewRegistry(table Table, noRow error, self, addr string, log *slog.Logger) *Registry {
	return &Registry{Self: self, Advertised: addr, table: table, noRow: noRow, log: log, known: map[string]entry{}, beating: true}
}

// Run beats every BeatEvery until ctx is done, then removes this
// replica's row, so that the others stop sending it requests at once.
func (g *Registry) Run(ctx context.Context) error {
	t := time.NewTicker(BeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			if err := g.table.Leave(lctx, g.Self); err != nil {
				g.log.Warn("internal channel: could not remove the replica's row", "err", err)
			}
			return nil
		case <-t.C:
			g.Beat(ctx)
		}
	}
}

// Beat records one heartbeat, and logs only when beating fails or comes
// back (every BeatEvery would flood the log while the database is away).
func (g *Registry) Beat(ctx context.Context) {
	err := g.table.Beat(ctx, g.Self, g.Advertised)
	g.mu.Lock()
	was := g.beating
	g.beating = err == nil
	g.mu.Unlock()
	switch {
	case err != nil && was && ctx.Err() == nil:
		g.log.Warn("internal channel: the heartbeat failed: other replicas will stop forwarding to this one", "err", err)
	case err == nil && !was:
		g.log.Info("internal channel: the heartbeat is back")
	}
}

// Addr returns the internal address of replica id: ErrGone when it has no
// recent heartbeat; another error when the database cannot say.
func (g *Registry) Addr(ctx context.Context, id string) (string, error) {
	g.mu.Lock()
	e, ok := g.known[id]
	g.mu.Unlock()
	if !ok || time.Since(e.at) > cacheFor {
		addr, err := g.table.Replica(ctx, id, DeadAfter)
		switch {
		case errors.Is(err, g.noRow):
			addr = ""
		case err != nil:
			return "", err
		}
		e = entry{addr: addr, at: time.Now()}
		g.mu.Lock()
		if len(g.known) > 1024 { // made-up ids must not grow it without end
			clear(g.known)
		}
		g.known[id] = e
		g.mu.Unlock()
	}
	if e.addr == "" {
		return "", ErrGone
	}
	return e.addr, nil
}
