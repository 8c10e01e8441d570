package daemon

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// channelCalls watches the requests for the servers this replica serves
// on the internal channel (peer.ServerPath), so that its stop closes no
// connection another replica may still write a call on. net/http's
// Shutdown closes every idle connection at once; a call another replica
// writes on one just then is lost unread, and the caller, whose request
// was written, can only report its outcome as unknown. A replica whose
// lease claims are slow routes calls here for seconds after the
// hand-over, so the channel waits until the others have followed.
type channelCalls struct {
	mu      sync.Mutex
	calls   int       // requests being served, streams aside; guarded by mu
	streams int       // subscriptions/listen streams (and GET event streams) open; guarded by mu
	last    time.Time // when the last request came; guarded by mu
	closing bool      // every answer closes its connection; guarded by mu
}

// channelQuiet is how long no request for a server may have come before
// the channel takes it that no replica routes calls here any more: under
// load one that does sends several a second.
const channelQuiet = time.Second

// channelGrace bounds the channel's stop once the hand-over is over: the
// wait for the others to follow, then for the calls in flight and the
// streams of their old connections (which end retireAfter, 5 s, after
// they moved; those left are cut as the process ends). No longer than
// the API's grace, which it used to share, so that a stop takes no
// longer than it did at worst (17 s under -race at load).
const channelGrace = 5 * time.Second

// serve counts the requests h serves; once the channel is closing, each
// answer closes its connection, which tells the replica that sent it,
// after its answer, to make its next request anew (and the listener,
// once closed, refuses it: not made).
func (c *channelCalls) serve(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream := r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
		c.mu.Lock()
		c.last = time.Now()
		if stream {
			c.streams++
		} else {
			c.calls++
		}
		closing := c.closing
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			if stream {
				c.streams--
			} else {
				c.calls--
			}
			c.mu.Unlock()
		}()
		if closing {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// quiet has every answer close its connection from now, and waits until
// no call is being served and either no other replica holds a stream
// here (each ends when that replica drops its connection) or none has
// sent a request for channelQuiet; false if ctx ended first.
func (c *channelCalls) quiet(ctx context.Context) bool {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		done := c.calls == 0 && (c.streams == 0 || time.Since(c.last) >= channelQuiet)
		c.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// inFlight is how many calls are being served, streams aside.
func (c *channelCalls) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// stop shuts the channel down once the others have followed the
// hand-over (channelCalls.quiet), within channelGrace of its own.
func (pc *peerServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), channelGrace)
	defer cancel()
	// A second of the grace is kept for the calls in flight then.
	qctx, qcancel := context.WithTimeout(ctx, channelGrace-time.Second)
	defer qcancel()
	start := time.Now()
	if !pc.calls.quiet(qctx) {
		pc.log.Warn("internal channel: requests for this replica's servers still come as it stops", "waited_ms", time.Since(start).Milliseconds())
	}
	quiet := time.Since(start)
	err := pc.srv.Shutdown(ctx)
	pc.log.Info("internal channel stopped", "quiet_ms", quiet.Milliseconds(), "shutdown_ms", (time.Since(start) - quiet).Milliseconds())
	if n := pc.calls.inFlight(); err != nil && n > 0 { // streams left are cut as the process ends; calls lose their answer
		pc.log.Warn("internal channel: calls still in flight at the end of its grace", "calls", n)
	}
}
