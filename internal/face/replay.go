package face

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The replay buffer: the events of the face's session-era response
// streams (MCP 2025-03-26, 2025-06-18, 2025-11-25), kept so that a client
// whose connection dropped mid-call can resume its stream with a GET
// carrying Last-Event-ID and still get the answer. MCP 2026-07-28 has no
// resumption (a broken stream loses its request; the client sends it
// again), so nothing of that era is kept.
//
// Every event of a stream has the id STREAM_N: the stream's id (unique in
// its session: random for a call's stream, empty for the standalone GET
// stream) and its index in the stream, the form the SDKs use. Every
// exchange of a session writes its events here (exchange.go): one buffer,
// one form of id, one bound.
//
// Bounded: each stream keeps at most replayStreamBytes (the oldest events
// go first; a resumption from before them is refused), the buffer at most
// replayTotalBytes (the least recently written streams go first), and a
// stream not written for replayTTL is forgotten. A stream whose last
// event reached a live connection of its client is freed at once, as is
// every stream of a session that ends.
type replayBuffer struct {
	mu      sync.Mutex
	streams map[streamKey]*replayStream
	total   int // bytes of every stream's events
	swept   time.Time

	streamCap, totalCap int
	ttl                 time.Duration
	now                 func() time.Time
}

const (
	replayStreamBytes = 8 << 20
	replayTotalBytes  = 64 << 20
	replayTTL         = 5 * time.Minute
)

type streamKey struct{ session, stream string }

// replayStream is the kept events of one stream.
type replayStream struct {
	first   int      // the index of events[0]
	events  [][]byte // as the stream sent them (nil: a priming event)
	size    int
	written time.Time
	ex      *exchange // the exchange whose stream it is, continued on resumption
}

func newReplayBuffer() *replayBuffer {
	return &replayBuffer{streams: map[streamKey]*replayStream{},
		streamCap: replayStreamBytes, totalCap: replayTotalBytes, ttl: replayTTL, now: time.Now}
}

// errReplayGone is why a stream cannot be resumed.
var errReplayGone = errors.New("the face no longer holds the events of this stream")

func (b *replayBuffer) open(k streamKey) *replayStream {
	s := b.streams[k]
	if s == nil {
		s = &replayStream{written: b.now()}
		b.streams[k] = s
	}
	return s
}

// append keeps an event of exchange ex's stream k and returns its index.
func (b *replayBuffer) append(k streamKey, data []byte, ex *exchange) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	index := b.add(k, data)
	b.streams[k].ex = ex
	return index
}

// add keeps data as the stream's next event and returns its index.
func (b *replayBuffer) add(k streamKey, data []byte) int {
	now := b.now()
	if now.Sub(b.swept) > b.ttl/10 {
		b.sweep(now)
	}
	s := b.open(k)
	s.events = append(s.events, data)
	s.size += len(data)
	s.written = now
	b.total += len(data)
	for s.size > b.streamCap && len(s.events) > 1 {
		b.dropFirst(s)
	}
	for b.total > b.totalCap && b.evictOldest(k) {
	}
	return s.first + len(s.events) - 1
}

func (b *replayBuffer) dropFirst(s *replayStream) {
	n := len(s.events[0])
	s.events[0] = nil
	s.events = s.events[1:]
	s.first++
	s.size -= n
	b.total -= n
}

// evictOldest forgets the least recently written stream other than keep;
// false when there is none.
func (b *replayBuffer) evictOldest(keep streamKey) bool {
	var oldest streamKey
	var at time.Time
	found := false
	for k, s := range b.streams {
		if k != keep && (!found || s.written.Before(at)) {
			oldest, at, found = k, s.written, true
		}
	}
	if found {
		b.forget(oldest)
	}
	return found
}

func (b *replayBuffer) forget(k streamKey) {
	if s := b.streams[k]; s != nil {
		b.total -= s.size
		delete(b.streams, k)
	}
}

// sweep forgets the streams not written for the buffer's TTL.
func (b *replayBuffer) sweep(now time.Time) {
	b.swept = now
	for k, s := range b.streams {
		if now.Sub(s.written) > b.ttl {
			b.forget(k)
		}
	}
}

// after is the events of stream k after index, copied out.
func (b *replayBuffer) after(k streamKey, index int) ([][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.locate(k, index)
	if err != nil {
		return nil, err
	}
	return append([][]byte(nil), s.events[index+1-s.first:]...), nil
}

// locate is stream k, if the buffer holds every event of it after index.
func (b *replayBuffer) locate(k streamKey, index int) (*replayStream, error) {
	s := b.streams[k]
	switch {
	case s == nil || b.now().Sub(s.written) > b.ttl:
		return nil, errReplayGone
	case index+1 < s.first:
		return nil, fmt.Errorf("%w: it keeps at most %d bytes of a stream, and the events after %d are gone", errReplayGone, b.streamCap, index)
	case index+1-s.first > len(s.events):
		return nil, fmt.Errorf("the stream has sent no event %d", index)
	}
	return s, nil
}

// sessionClosed forgets every stream of session.
func (b *replayBuffer) sessionClosed(session string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.streams {
		if k.session == session {
			b.forget(k)
		}
	}
}

// free forgets a stream whose last event reached its client.
func (b *replayBuffer) free(session, stream string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forget(streamKey{session, stream})
}

// held reports whether the buffer can resume stream k after index, and
// the exchange whose stream it is.
func (b *replayBuffer) held(k streamKey, index int) (*exchange, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.locate(k, index)
	if err != nil {
		return nil, err
	}
	return s.ex, nil
}

// parseEventID reads a Last-Event-ID: the stream and the index of the
// last event the client has.
func parseEventID(id string) (stream string, index int, ok bool) {
	stream, n, ok := strings.Cut(id, "_")
	if !ok || n == "" || len(n) > 9 || (n[0] == '0' && n != "0") {
		return "", 0, false
	}
	for _, c := range []byte(n) {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	index, err := strconv.Atoi(n)
	return stream, index, err == nil
}
