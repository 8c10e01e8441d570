package face

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// An exchange is one POST's answer: the requests it carries, answered in
// the era its client reads. It stays one JSON message while it can —
// one request, answered before anything else must reach the client, which
// is how most calls are answered — and becomes an event stream once
// something must go first (a question to the client, progress, a log
// message), when it answers a batch, or, for a 2025-11-25 client, once a
// request has run for primeAfter: a priming event then gives the client an
// event id to resume from should its connection drop (MCP 2025-11-25 asks
// servers to send one).
//
// In the session era every event has an id STREAM_N and is kept in the
// face's replay buffer (replay.go), so that a client whose connection
// dropped resumes the stream with a GET carrying Last-Event-ID (resume).
// A request whose POST dropped is cancelled, as every server measured
// directly cancels it (go-sdk, mcp-go, the TypeScript SDKs, fastmcp): at
// once when its stream had no event id to resume from, or it is waiting
// on the client's answer to a question (which can reach no one now); else
// after dropProbe, unless the client may be about to resume — it resumed
// a stream of this session before, or its standalone stream dropped too,
// as everything does when a network fails. Such a request runs on for
// resumeWindow, and to its end once its stream was resumed. A client that
// lets one request go keeps its other connections: a dropped POST beside
// a live standalone stream, from a client that never resumed, is a
// cancellation. A session's standalone GET stream is an exchange too: one
// with no requests, never done.
type exchange struct {
	s       *session // nil for a stateless request
	version string   // the era its client reads
	single  bool     // one request: may be answered as one JSON message

	post http.ResponseWriter // the POST's own

	mu      sync.Mutex
	w       http.ResponseWriter // nil: no connection of the client holds the stream now
	header  http.Header         // set on the answer before it starts
	sse     bool
	stream  string        // its event stream's id, once it is one
	open    keySet        // the keys of the requests not answered yet
	done    bool          // every request answered; nothing more is written
	ended   chan struct{} // closed when done
	asking  int           // questions to the client awaiting its answer
	resumed bool          // a client resumed the stream after its POST dropped
	listen  bool          // the session's standalone stream
	sent    int           // the index of the last event a connection took
	taken   chan struct{} // closed when another connection takes the stream over
	// postLeft: the POST's hold ended (left), its drop handled
	postLeft bool

	settle *time.Timer // primes the stream (Primes)
}

// primeAfter is how long a request of a 2025-11-25 client runs before its
// answer becomes a resumable event stream: far beyond a call answered at
// once, far below a connection's patience.
const primeAfter = 200 * time.Millisecond

// resumeWindow is how long a request whose POST dropped waits for its
// client to resume the stream: longer than the SDK clients' first
// reconnection delays (one second for the TypeScript SDK's).
const resumeWindow = 10 * time.Second

// dropProbe is how long the face waits after a POST dropped before it
// reads the client's other connections: the drops of one network failure
// reach the face's handlers within it.
const dropProbe = 250 * time.Millisecond

// newExchange is the answer to a POST carrying the requests keys, with
// header set on it (set before its priming timer may read it).
func newExchange(s *session, version string, w http.ResponseWriter, keys []string, single bool, header http.Header) *exchange {
	ex := &exchange{s: s, version: version, w: w, post: w, single: single, header: header, ended: make(chan struct{}), sent: -1}
	for _, k := range keys {
		ex.open.add(k)
	}
	if s != nil && era.Primes(version) && len(keys) > 0 {
		ex.settle = time.AfterFunc(primeAfter, ex.prime)
	}
	return ex
}

// unused lets go of an exchange that will not be served (its POST was
// refused): its priming timer must not write to the POST after its
// handler returned.
func (ex *exchange) unused() {
	if ex.settle != nil {
		ex.settle.Stop()
	}
	ex.release()
}

// resumable reports whether the exchange's events carry ids a client may
// resume from.
func (ex *exchange) resumable() bool { return ex.s != nil && era.Resumable(ex.version) }

// startLocked makes the answer an event stream; for a client of an era
// that primes its streams, starting with the priming event.
func (ex *exchange) startLocked() {
	h := ex.w.Header()
	for k, v := range ex.header {
		h[k] = v
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	ex.w.WriteHeader(http.StatusOK)
	ex.sse = true
	if ex.resumable() && !ex.listen {
		ex.stream = rand.Text()
	}
	if ex.s != nil && era.Primes(ex.version) {
		ex.sendLocked("prime", nil)
	}
}

// prime starts the event stream, unless the answer is written or the
// stream started already.
func (ex *exchange) prime() {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.done || ex.sse || ex.w == nil {
		return
	}
	ex.startLocked()
}

// errDone is why a message cannot ride an exchange.
var errDone = errors.New("the request has been answered")

// event sends msg, a message that belongs to the exchange's requests (a
// notification, a question), ahead of their answers.
func (ex *exchange) event(msg []byte) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.done {
		return errDone
	}
	if !ex.sse {
		if ex.w == nil {
			return errors.New("the client's connection is gone")
		}
		ex.startLocked()
	}
	ex.sendLocked("message", msg)
	return nil
}

// sendLocked keeps an event of a resumable stream and writes it to the
// connection holding the stream, if one does.
func (ex *exchange) sendLocked(name string, msg []byte) {
	id, index := "", 0
	if ex.resumable() {
		index = ex.s.p.f.replay.append(streamKey{ex.s.id, ex.stream}, msg, ex)
		id = eventID(ex.stream, index)
	}
	if ex.w == nil {
		return
	}
	if err := writeSSE(ex.w, name, id, msg); err != nil {
		ex.w = nil // kept: the client may resume
		return
	}
	ex.sent = index
}

// answer sends msg, the answer to the request key; status, if not 0, is
// the HTTP status of a stateless error answer (SEP-2575).
func (ex *exchange) answer(key string, msg []byte, status int) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.done || !ex.open.contains(key) {
		return
	}
	ex.open.remove(key)
	last := ex.open.len() == 0
	switch {
	case !ex.sse && ex.single:
		if ex.w != nil {
			h := ex.w.Header()
			for k, v := range ex.header {
				h[k] = v
			}
			h.Set("Content-Type", "application/json")
			if status == 0 {
				status = http.StatusOK
			}
			ex.w.WriteHeader(status)
			ex.w.Write(msg)
		} // else its client went away, and a JSON answer cannot be resumed
	case !ex.sse && ex.w == nil:
		// nothing to resume
	default:
		if !ex.sse {
			ex.startLocked()
		}
		ex.sendLocked("message", msg)
	}
	if last {
		ex.finishLocked()
	}
}

// finishLocked marks the exchange done: its last answer is written.
func (ex *exchange) finishLocked() {
	if ex.done {
		return
	}
	ex.done = true
	close(ex.ended)
	if ex.settle != nil {
		ex.settle.Stop()
	}
	if ex.stream != "" && ex.w != nil {
		// Its last event reached a live connection: nothing to resume.
		ex.s.p.f.replay.free(ex.s.id, ex.stream)
	}
}

// serve holds the POST until its requests are answered, the client's
// connection drops, or the session ends; a drop leaves the requests
// resumable or cancels them (dropped).
func (ex *exchange) serve(r *http.Request) {
	var sessionDone <-chan struct{}
	if ex.s != nil {
		sessionDone = ex.s.done
	}
	select {
	case <-ex.ended:
	case <-sessionDone:
	case <-r.Context().Done():
	}
	ex.left(r)
}

// watch handles the POST's drop while its own handler does its request
// (session.run) and cannot wait in serve; stop ends the watch, before
// serve takes over.
func (ex *exchange) watch(r *http.Request) (stop func() bool) {
	return context.AfterFunc(r.Context(), func() { ex.left(r) })
}

// left handles the end of the POST's hold on the exchange, once: nothing
// is written to its connection after, and a drop leaves the requests not
// answered resumable or cancels them (dropped).
func (ex *exchange) left(r *http.Request) {
	ex.mu.Lock()
	if ex.postLeft {
		ex.mu.Unlock()
		return
	}
	ex.postLeft = true
	done := ex.done
	if ex.w == ex.post {
		ex.w = nil // nothing is written once this handler returns
	}
	stream, asking := ex.stream, ex.asking
	ex.mu.Unlock()
	if done || ex.s == nil || r.Context().Err() == nil {
		if !done && ex.s == nil {
			ex.cancelOpen() // a stateless request: closing it cancels it
		}
		return
	}
	ex.dropped(stream, asking)
}

// release lets go of the POST's connection, whose handler returns:
// nothing is written to it after.
func (ex *exchange) release() {
	ex.mu.Lock()
	if ex.w == ex.post {
		ex.w = nil
	}
	ex.mu.Unlock()
}

// dropped handles the end of a POST whose requests are not all answered.
func (ex *exchange) dropped(stream string, asking int) {
	if stream == "" || asking > 0 {
		ex.cancelOpen()
		return
	}
	time.AfterFunc(dropProbe, func() {
		if ex.isResumed() {
			return
		}
		s := ex.s
		if !s.resumes.Load() && (!s.listened.Load() || s.streams.Load() > 0) {
			ex.cancelOpen() // the client let the request go
			return
		}
		time.AfterFunc(resumeWindow-dropProbe, func() {
			if !ex.isResumed() {
				ex.cancelOpen()
			}
		})
	})
}

// detached reports whether the exchange's requests are unanswered and no
// connection of the client holds their stream: the POST dropped, and the
// stream was not resumed (or its resumption dropped too).
func (ex *exchange) detached() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return !ex.done && !ex.listen && ex.w == nil
}

// isResumed reports whether a client resumed the stream after its POST
// dropped.
func (ex *exchange) isResumed() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.resumed
}

// cancelOpen cancels the requests not answered yet.
func (ex *exchange) cancelOpen() {
	ex.mu.Lock()
	keys := ex.open.keys()
	ex.mu.Unlock()
	for _, k := range keys {
		if ex.s != nil {
			ex.s.cancel(k)
		}
	}
}

// ask marks a question to the client pending on the exchange, and returns
// what marks it answered. A question on a stream whose POST dropped and
// was not resumed cannot reach anyone: the exchange's requests are
// cancelled.
func (ex *exchange) ask() func() {
	ex.mu.Lock()
	ex.asking++
	gone := ex.w == nil && !ex.resumed && ex.sse
	ex.mu.Unlock()
	if gone {
		ex.cancelOpen()
	}
	return func() {
		ex.mu.Lock()
		ex.asking--
		ex.mu.Unlock()
	}
}

// attach serves a GET on the exchange's stream — a resumption after the
// event index, or (index -1) the session's standalone stream afresh: the
// events after it (afresh, those no connection took yet), then the rest
// of the stream as it comes, until it is done or the GET ends. A
// connection that held the stream before is let go: a client comes back
// when its connection dropped, often before the face has seen the drop.
func (ex *exchange) attach(w http.ResponseWriter, r *http.Request, index int) {
	ex.mu.Lock()
	resuming := index >= 0
	if !resuming {
		index = ex.sent
	}
	events, err := ex.s.p.f.replay.after(streamKey{ex.s.id, ex.stream}, index)
	if err != nil {
		if resuming {
			ex.mu.Unlock()
			// 400, not 404: a 404 tells the client its session is gone.
			http.Error(w, "plexus: cannot resume this stream: "+err.Error()+"; send the request again", http.StatusBadRequest)
			return
		}
		events = nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if ex.listen {
		// Headers out at once: the stream may stay quiet for long, and a
		// proxy in between holds headers until data comes.
		w.Write([]byte(": ok\n\n"))
		http.NewResponseController(w).Flush()
	}
	for i, msg := range events {
		name := "message"
		if msg == nil {
			name = "prime"
		}
		if writeSSE(w, name, eventID(ex.stream, index+1+i), msg) != nil {
			ex.mu.Unlock()
			return
		}
		ex.sent = index + 1 + i
	}
	done := ex.done
	taken := make(chan struct{})
	if !done {
		if ex.taken != nil {
			close(ex.taken)
		}
		ex.w, ex.taken = w, taken
		ex.sse = true
		ex.resumed = ex.resumed || resuming
	}
	ex.mu.Unlock()
	if done {
		ex.s.p.f.replay.free(ex.s.id, ex.stream)
		return
	}
	select {
	case <-ex.ended:
		if r.Context().Err() == nil {
			ex.s.p.f.replay.free(ex.s.id, ex.stream)
		}
	case <-ex.s.done:
	case <-r.Context().Done():
	case <-taken:
	}
	ex.mu.Lock()
	if ex.w == w {
		ex.w = nil
	}
	ex.mu.Unlock()
}

// writeSSE writes one event (id "" for none) and flushes it.
func writeSSE(w http.ResponseWriter, name, id string, data []byte) error {
	b := sse.AppendData(make([]byte, 0, len(data)+len(name)+len(id)+24), name, id, data)
	if _, err := w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// eventID is the id of event index of stream.
func eventID(stream string, index int) string {
	return stream + "_" + strconv.Itoa(index)
}

// abandon gives the request key up without an answer: its client
// cancelled it and expects none.
func (ex *exchange) abandon(key string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.done || !ex.open.contains(key) {
		return
	}
	ex.open.remove(key)
	if ex.open.len() > 0 {
		return
	}
	if !ex.sse && ex.w != nil {
		ex.w.WriteHeader(http.StatusAccepted)
	}
	ex.finishLocked()
}
