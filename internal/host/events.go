package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// subscriberBuffer is how many events a subscriber may fall behind before
// it is dropped: a slow reader must never block the daemon.
const subscriberBuffer = 256

// bus fans events out to subscribers.
type bus struct {
	mu   sync.Mutex
	seq  int64
	next int
	subs map[int]chan apitype.Event
}

// Subscribe returns a channel of events and a function that ends the
// subscription. The channel is closed when the subscription ends, also when
// the subscriber fell too far behind.
func (h *Host) Subscribe() (<-chan apitype.Event, func()) {
	b := &h.events
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[int]chan apitype.Event{}
	}
	id := b.next
	b.next++
	ch := make(chan apitype.Event, subscriberBuffer)
	b.subs[id] = ch
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if c, ok := b.subs[id]; ok {
			delete(b.subs, id)
			close(c)
		}
	}
}

// emit numbers ev and sends it to every subscriber. A status in it is as
// new as the event itself (apitype.ServerStatus.EventSeq).
func (b *bus) emit(ev apitype.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev.Seq = b.seq
	if ev.Status != nil {
		ev.Status.EventSeq = ev.Seq
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	for id, ch := range b.subs {
		select {
		case ch <- ev:
		default:
			delete(b.subs, id)
			close(ch)
		}
	}
}

// last returns the Seq of the newest event emitted.
func (b *bus) last() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// emitChanges compares the new snapshot with what was last announced and
// emits an event for each server whose visible state changed, for each
// removed server, and one "catalog" event if the catalog changed
// ("capabilities changed"). The caller holds serversMu, which orders the
// announcements.
func (h *Host) emitChangesLocked(s *snapshot) {
	if h.announced == nil {
		h.announced = map[string]string{}
	}
	for _, name := range s.names {
		st := s.status(name)
		fp := fmt.Sprint(st.State, "|", st.LastError, "|", st.Tools, "|", st.Restarts, "|", st.CrashLooping, "|", st.Installing, "|", st.NextTryAt, "|", st.PID, "|", heldSignature(st), "|", authSignature(st.Auth))
		if h.announced[name] == fp {
			continue
		}
		h.announced[name] = fp
		h.events.emit(apitype.Event{Type: apitype.EventServer, Server: name, Status: &st})
	}
	for name := range h.announced {
		if _, ok := s.servers[name]; !ok {
			delete(h.announced, name)
			h.events.emit(apitype.Event{Type: apitype.EventServerRemoved, Server: name})
		}
	}
	h.announceHeldLocked(s)
	sum := sha256.New()
	for _, name := range s.names {
		fp := s.fps[name]
		sum.Write([]byte(name + "\x00"))
		sum.Write(fp[:])
	}
	fp := hex.EncodeToString(sum.Sum(nil))
	if fp != h.catalogFP {
		first := h.catalogFP == ""
		h.catalogFP = fp
		if !first {
			h.events.emit(apitype.Event{Type: apitype.EventCatalog})
		}
	}
}

// emitStderr announces one stderr line of a server.
func (h *Host) emitStderr(server, line string, seq int64) {
	h.events.emit(apitype.Event{Type: apitype.EventStderr, Server: server, Line: line, LineSeq: seq})
}

// EndSubscriptions closes every event subscription, so that streaming
// clients are let go at shutdown.
func (h *Host) EndSubscriptions() {
	b := &h.events
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, ch := range b.subs {
		delete(b.subs, id)
		close(ch)
	}
}

// authSignature is what of a server's OAuth state is announced when it
// changes: a login needed, started, failed or done, a new token.
func authSignature(a *apitype.AuthStatus) string {
	if a == nil {
		return ""
	}
	return fmt.Sprint(a.NeedsLogin, a.LoggedIn, a.Login, a.LoginError, a.ExpiresAt, a.Issuer)
}
