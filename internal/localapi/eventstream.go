package localapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// keepAlive is how often an idle event stream gets a comment line, so that
// a dead client is noticed and proxies keep the stream open.
const keepAlive = 15 * time.Second

// eventStream is one server-sent event stream to a client: the event
// stream of the settings API and the audit log's (`plexus audit -f`).
type eventStream struct {
	w  http.ResponseWriter
	fl http.Flusher
}

// canStream reports whether w can carry an event stream.
func canStream(w http.ResponseWriter) bool {
	_, ok := w.(http.Flusher)
	return ok
}

// openEventStream sends the stream's headers and a first comment naming
// it; w must be able to stream (canStream).
func openEventStream(w http.ResponseWriter, name string) *eventStream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	s := &eventStream{w: w, fl: w.(http.Flusher)}
	s.comment(name)
	return s
}

// send writes one event; false once the client is gone.
func (s *eventStream) send(typ string, data []byte) bool {
	if _, err := s.w.Write(sse.AppendData(nil, typ, "", data)); err != nil {
		return false
	}
	s.fl.Flush()
	return true
}

func (s *eventStream) comment(text string) bool {
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return false
	}
	s.fl.Flush()
	return true
}

// follow hands each value of ch to on, and each firing of extra (nil:
// none) to onExtra, until the client goes away, ch closes or a handler
// returns false; while idle, a keep-alive comment goes out every
// keepAlive.
func follow[T any](r *http.Request, s *eventStream, ch <-chan T, on func(T) bool, extra <-chan struct{}, onExtra func() bool) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if !s.comment("keep-alive") {
				return
			}
		case <-extra:
			if !onExtra() {
				return
			}
		case v, ok := <-ch:
			if !ok || !on(v) {
				return
			}
		}
	}
}
