package face

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"
)

// frameAnswer is the answer stream of one frame call of a session-era
// client: JSON while the call is short and asks nothing, the way most
// calls are answered; an event stream once a question must go to the
// client (frameask.go) or, for a 2025-11-25 session, once the call has
// run for primeAfter — a priming event then gives the client an event id
// to resume from should its connection drop (MCP 2025-11-25 asks servers
// to send one). Every event has an id and is kept in the replay buffer,
// so that a GET with Last-Event-ID replays what the client missed and
// then carries the rest of the stream (resumeFrame).
type frameAnswer struct {
	mu      sync.Mutex
	w       http.ResponseWriter // nil: no client holds the stream now
	sse     bool
	done    bool
	settled bool          // the call returned: no priming now
	ended   chan struct{} // closed when done, for a stream that started

	buf    *replayBuffer
	stream string        // the stream's id, once it started
	lives  *requestLives // told the stream's id as it starts
	life   requestLife   // the call's, as its POST goes (requestlife.go)
}

// primeAfter is how long a 2025-11-25 frame call runs before its answer
// becomes a resumable event stream: far beyond a call answered at once,
// far below a connection's patience.
const primeAfter = 200 * time.Millisecond

// start makes the answer an event stream; a.mu is held.
func (a *frameAnswer) start() {
	a.w.Header().Set("Content-Type", "text/event-stream")
	a.w.Header().Set("Cache-Control", "no-cache")
	a.w.WriteHeader(http.StatusOK)
	a.sse = true
	a.ended = make(chan struct{})
	a.stream = rand.Text()
	a.lives.named(&a.life, a.stream)
}

// prime starts the event stream with a priming event, unless the call
// has ended or the stream started already.
func (a *frameAnswer) prime() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done || a.sse || a.settled || a.w == nil {
		return
	}
	a.start()
	a.send("prime", nil)
}

// event writes msg as an event, starting the stream if need be. An event
// the client's connection did not take is kept for its resumption.
func (a *frameAnswer) event(msg []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return errors.New("the call has ended")
	}
	if !a.sse {
		if a.w == nil {
			return errors.New("the client went away")
		}
		a.start()
	}
	a.send("message", msg)
	return nil
}

// send keeps an event of the stream and writes it to the client holding
// the stream, if one does; a.mu is held.
func (a *frameAnswer) send(name string, msg []byte) {
	index := a.buf.appendFrame(streamKey{a.life.session, a.stream}, msg, a)
	if a.w == nil {
		return
	}
	if err := writeSSE(a.w, name, eventID(a.stream, index), msg); err != nil {
		a.w = nil // kept: the client may resume
	}
}

// writeSSE writes one event and flushes it.
func writeSSE(w http.ResponseWriter, name, id string, data []byte) error {
	b := make([]byte, 0, len(data)+len(name)+len(id)+24)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\nid: "...)
	b = append(b, id...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// finish writes the call's answer: as JSON, or as the stream's last event.
func (a *frameAnswer) finish(r *http.Request, id, res json.RawMessage, err error) {
	a.mu.Lock()
	sse, w := a.sse, a.w
	a.done = !sse
	a.mu.Unlock()
	if err == nil {
		res = sessionEraResult(res)
	}
	if !sse {
		if w != nil { // else the client went away, and a JSON answer cannot be resumed
			writeAnswer(w, r, id, res, err, false)
		}
		return
	}
	var msg []byte
	if err == nil {
		msg = appendResponse(id, res)
	} else {
		msg = errorAnswer(id, err)
	}
	a.event(msg)
	a.close()
}

// close ends the stream for writers that come late.
func (a *frameAnswer) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	if a.ended != nil {
		select {
		case <-a.ended:
		default:
			close(a.ended)
		}
	}
}

// streamed is the id of the answer's event stream; "" if it is none.
func (a *frameAnswer) streamed() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stream
}

// release lets go of w, whose request ends.
func (a *frameAnswer) release(w http.ResponseWriter) {
	a.mu.Lock()
	if a.w == w {
		a.w = nil
	}
	a.mu.Unlock()
}

// resume serves a GET with Last-Event-ID on a frame call's stream:
// the events after index, then the rest of the stream as it comes, until
// its last event.
func (a *frameAnswer) resume(w http.ResponseWriter, r *http.Request, index int) {
	a.mu.Lock()
	events, err := a.buf.after(streamKey{a.life.session, a.stream}, index)
	if err != nil {
		a.mu.Unlock()
		http.Error(w, "plexus: cannot resume this stream: "+err.Error()+"; send the request again", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, msg := range events {
		name := "message"
		if msg == nil {
			name = "prime"
		}
		if writeSSE(w, name, eventID(a.stream, index+1+i), msg) != nil {
			a.mu.Unlock()
			return
		}
	}
	done := a.done
	if !done {
		a.w = w
	}
	a.mu.Unlock()
	if done {
		return
	}
	defer a.release(w)
	select {
	case <-a.ended:
	case <-r.Context().Done():
	}
}
