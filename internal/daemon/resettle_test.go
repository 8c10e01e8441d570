package daemon

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/store"
)

// TestResettleWaitsWithoutWakes: once a request has started the quiet
// second, the requests after it wake nobody (the face's poke finds its
// channel full), and the daemon still settles a second after the last of
// them, not after the first.
func TestResettleWaitsWithoutWakes(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "home"))
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Options{Store: st})
	t.Cleanup(h.Close)
	served := make(chan struct{}, 1) // as the face's Activity
	var active atomic.Int64
	poke := func() {
		active.Store(time.Now().UnixNano())
		select {
		case served <- struct{}{}:
		default:
		}
	}
	type settling struct {
		at      time.Time
		waiting int // pokes left in the channel: none read while waiting
	}
	done := make(chan settling, 4)
	resettled = func() { done <- settling{time.Now(), len(served)} }
	t.Cleanup(func() { resettled = nil })
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		resettle(ctx, h, served, func() time.Time { return time.Unix(0, active.Load()) }, nil)
	}()
	t.Cleanup(func() { cancel(); <-stopped })

	poke()
	for end := time.Now().Add(30 * time.Second); len(served) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("resettle never took the first request's poke")
		}
	}
	// Requests 100 ms apart for half a second after the first.
	for range 5 {
		time.Sleep(100 * time.Millisecond)
		poke()
	}
	last := time.Now()
	select {
	case s := <-done:
		if s.waiting != 1 {
			t.Errorf("%d pokes waiting when it settled, want 1: resettle woke for requests while it waited", s.waiting)
		}
		if quiet := s.at.Sub(last); quiet < resettleDelay-10*time.Millisecond {
			t.Errorf("settled %v after the last request, want at least %v", quiet, resettleDelay)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("never settled after the requests stopped")
	}
}
