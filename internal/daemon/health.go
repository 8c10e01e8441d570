package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
)

// health answers a balancer's or Kubernetes's probes, unauthenticated:
//
//   - GET /healthz, liveness: the process answers HTTP. Nothing else is
//     checked, so that a database outage does not get every replica
//     restarted (restarting would not bring the database back, and a
//     replica cannot start without it).
//   - GET /readyz, readiness: the first start of the servers has settled
//     (none is still starting, or settleTimeout passed). The database is
//     not asked: a replica serves what runs without it (its servers, the
//     sessions it holds, the settings it read), and a database outage
//     taking every replica out of the balancer would stop all of that.
//     Writes fail meanwhile, each with its own clear error. A replica
//     that began to stop is not ready either. A replica that is not ready
//     is taken out of the balancer's rotation, not restarted.
//
// Both answer only "ok" or "not ready": which check failed, and why, goes
// to the log (at most once per state change), never to the caller.
type health struct {
	settled  atomic.Bool
	stopping atomic.Bool // the daemon is stopping: out of rotation
	log      *slog.Logger
	failing  atomic.Bool // the last readiness check failed; for the log
}

func (h *health) healthz(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	w.Write([]byte("ok\n"))
}

func (h *health) readyz(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	if err := h.ready(r.Context()); err != nil {
		if !h.failing.Swap(true) {
			h.log.Warn("not ready", "err", err)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("not ready\n"))
		return
	}
	if h.failing.Swap(false) {
		h.log.Info("ready again")
	}
	w.Write([]byte("ok\n"))
}

// errNotSettled is readiness before the servers' first start settled.
var errNotSettled = errors.New("the servers are still starting")

func (h *health) ready(context.Context) error {
	switch {
	case h.stopping.Load():
		return errStopping
	case !h.settled.Load():
		return errNotSettled
	}
	return nil
}

// errStopping is readiness once the daemon began to stop: a balancer
// sends it nothing more while it hands its servers over.
var errStopping = errors.New("the daemon is stopping")

// handle adds the probes to mux.
func (h *health) handle(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
}
