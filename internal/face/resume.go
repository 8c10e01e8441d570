package face

import (
	"fmt"
	"net/http"
)

// Resumption: a session-era client whose response stream dropped sends a
// GET with Last-Event-ID, the id of the last event it has. The face
// checks that the replay buffer (replay.go) still holds every event of
// that stream after it — of this session only: a stream of another
// session is unknown here — and then hands the GET to the stream's
// owner, which replays those events and goes on with the stream: the
// SDK's handler for its own streams, the frame call for its
// (framestream.go). A call whose POST dropped runs on
// once its stream is resumed (requestlife.go).

// resume serves a GET with Last-Event-ID.
func (p *profile) resume(w http.ResponseWriter, r *http.Request) (path, reason string) {
	last := r.Header.Get("Last-Event-ID")
	if stateless(r) {
		w.Header().Set("Allow", "POST")
		http.Error(w, "plexus: MCP 2026-07-28 has no stream resumption (Last-Event-ID): send the request again, with a new id", http.StatusMethodNotAllowed)
		return pathRefused, reasonResume2026
	}
	session := r.Header.Get("Mcp-Session-Id")
	if session == "" || p.streamsOf(session) == nil {
		p.serveSDK(w, r, envelope{}) // the SDK says what is wrong with the session
		return pathSDK, reasonResume
	}
	stream, index, ok := parseEventID(last)
	if !ok {
		http.Error(w, fmt.Sprintf("plexus: Last-Event-ID %q is not an event id this face sent (STREAM_INDEX)", last), http.StatusBadRequest)
		return pathRefused, reasonResumeGone
	}
	k := streamKey{session, stream}
	frame, err := p.f.replay.held(k, index)
	if err != nil {
		// 400, not 404: a 404 tells the client its session is gone.
		http.Error(w, fmt.Sprintf("plexus: cannot resume the stream of Last-Event-ID %q: %v; send the request again", last, err), http.StatusBadRequest)
		return pathRefused, reasonResumeGone
	}
	p.f.lives.resume(k)
	if frame != nil {
		// An open stream of the session: not idle (idle.go).
		ss := p.streamsOf(session)
		ss.open.Add(1)
		frame.resume(w, r, index)
		ss.touch()
		ss.open.Add(-1)
		p.delivered(r, &stream)
		return pathFrame, reasonResume
	}
	p.serveSDK(w, r, envelope{})
	if stream != "" {
		p.delivered(r, &stream)
	}
	return pathSDK, reasonResume
}

// delivered frees the kept events of a call's stream once the response
// that carried its last event ended — ended by the face, not by a client
// whose connection dropped, which may resume the stream.
func (p *profile) delivered(r *http.Request, stream *string) {
	if stream != nil && *stream != "" && r.Context().Err() == nil {
		p.f.replay.free(r.Header.Get("Mcp-Session-Id"), *stream)
	}
}
