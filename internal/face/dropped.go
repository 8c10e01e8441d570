package face

import (
	"net/http"
	"sync/atomic"
	"time"
)

// A session-era client that goes away without a DELETE — an editor killed,
// a `plexus mcp` bridge ended by a signal — leaves nothing behind but its
// standalone GET stream, which drops. The face then ends the session at
// once, instead of holding it (its host session, its per-session servers,
// its place under mcp.face.maxSessions) until it expires: unless, within
// dropGrace, the client opens its stream again or sends anything on the
// session, as one does whose connection broke and that reconnects. A
// stream the server ended (the session closed, a second GET refused) is
// no sign of a client gone.

// dropGrace is how long a session whose client dropped its stream waits
// for that client to come back.
const dropGrace = 3 * time.Second

// sessionStreams is what the face counts of one session's requests.
type sessionStreams struct {
	open atomic.Int32  // GET streams being served
	busy atomic.Int32  // POSTs being served
	seen atomic.Uint64 // requests seen: a client that came back sent one
	last atomic.Int64  // when a request last started or ended, Unix ns (idle.go)
}

// touch records that a request of the session started or ended now.
func (s *sessionStreams) touch() { s.last.Store(time.Now().UnixNano()) }

// streamsOf is the counts of a live session of the profile; nil for an id
// the face did not open a session for.
func (p *profile) streamsOf(id string) *sessionStreams {
	if id == "" {
		return nil
	}
	v, ok := p.streams.Load(id)
	if !ok {
		return nil
	}
	return v.(*sessionStreams)
}

// noteRequest counts a request on a session and returns the function
// that marks its end.
func (p *profile) noteRequest(r *http.Request) func() {
	s := p.streamsOf(r.Header.Get("Mcp-Session-Id"))
	if s == nil {
		return func() {}
	}
	s.seen.Add(1)
	s.touch()
	if r.Method != http.MethodPost {
		return s.touch
	}
	s.busy.Add(1)
	return func() { s.touch(); s.busy.Add(-1) }
}

// serveStream serves a session's GET stream through the SDK's handler and,
// when its client dropped it, ends the session unless the client comes
// back within dropGrace.
func (p *profile) serveStream(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	s := p.streamsOf(id)
	if s == nil {
		p.stateful.ServeHTTP(w, r)
		return
	}
	s.open.Add(1)
	p.stateful.ServeHTTP(w, r)
	s.touch()
	s.open.Add(-1)
	if r.Context().Err() == nil {
		return // ended by the server, not by a client gone
	}
	seen := s.seen.Load()
	p.f.log.Info("face: a session's client dropped its stream; the session ends unless the client is back within "+dropGrace.String(), "profile", p.name)
	time.AfterFunc(dropGrace, func() {
		if s.open.Load() > 0 || s.busy.Load() > 0 || s.seen.Load() != seen {
			return // the client is back
		}
		p.endSession(id, "its client dropped its stream and did not come back")
	})
}

// endSession ends the profile's session id, if it is still live; track
// then frees what it held.
func (p *profile) endSession(id, why string) {
	for ss := range p.srv.Sessions() {
		if ss.ID() == id {
			p.f.log.Info("face: a session ended: "+why, "profile", p.name)
			ss.Close()
			return
		}
	}
}
