package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// MaxEventSize bounds one event of the event stream: its data, all lines
// together. The daemon's events are small (a status, one stderr line); the
// bound is there so that a broken stream cannot grow memory without limit.
const MaxEventSize = 16 << 20

// ErrEventStreamClosed is wrapped by the error of EventStream.Next once the
// stream has ended without the caller asking: the daemon stopped, or the
// connection to it broke. Its message is the whole story for the common
// case, a clean end of the stream.
var ErrEventStreamClosed = errors.New("the daemon closed the event stream")

// EventStream is an open GET /v1/events: the daemon's events, in order, as
// they happen. Read it with Next; end it by canceling the context given to
// Events, or with Close.
//
// A stream is not a channel or an iterator that connects lazily: Events
// returns only once the daemon has answered, so a caller can open the
// stream, then read a snapshot (Logs, Status), and know that nothing that
// happened after the snapshot is missed. Event.Seq tells which events the
// snapshot already holds.
type EventStream struct {
	ctx  context.Context
	body io.ReadCloser
	sse  *sse.Reader

	closeOnce sync.Once
	err       error // sticky: once set, Next returns it
}

// Events opens the daemon's event stream. It returns when the daemon has
// answered; a daemon that cannot serve the stream gives an error here
// (an *APIError, or ErrDaemonNotRunning).
//
// The stream has no overall timeout: it stays open until ctx ends, Close is
// called, or the daemon goes away. The daemon sends a keep-alive comment
// every 15 s, which Next reads and skips.
func (c *Client) Events(ctx context.Context) (*EventStream, error) {
	return c.eventStream(ctx, "/events")
}

// SessionEvents is Events for one session: the state of its servers, and
// "catalog" when its catalog changed (held back while a turn runs).
func (c *Client) SessionEvents(ctx context.Context, id string) (*EventStream, error) {
	return c.eventStream(ctx, "/sessions/"+url.PathEscape(id)+"/events")
}

func (c *Client) eventStream(ctx context.Context, path string) (*EventStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://plexus"+apitype.APIVersion+path, nil)
	if err != nil {
		return nil, fmt.Errorf("building the request GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := c.streams.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, readAPIError(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("the daemon answered GET %s with %q, not an event stream (is the daemon the same version as this program?)", path, resp.Header.Get("Content-Type"))
	}
	return &EventStream{ctx: ctx, body: resp.Body, sse: sse.NewReader(resp.Body, MaxEventSize)}, nil
}

// Next returns the next event, waiting for it as long as it takes. It fails
// with ctx's error once the context given to Events ends, and with an error
// wrapping ErrEventStreamClosed when the daemon ends the stream; after
// either, every call returns the same error.
//
// An event whose data is not an apitype.Event is returned as an error too,
// but the stream stays usable: Next may be called again.
//
// Next must not be called concurrently with itself or with Close.
func (s *EventStream) Next() (apitype.Event, error) {
	se, err := s.next()
	if err != nil {
		return apitype.Event{}, err
	}
	var ev apitype.Event
	if err := json.Unmarshal([]byte(se.Data), &ev); err != nil {
		return apitype.Event{}, fmt.Errorf("decoding a %q event from the daemon: %w (is the daemon the same version as this program?)", se.Type, err)
	}
	if ev.Type == "" {
		// The SSE event name carries the type too; the data should repeat it.
		ev.Type = se.Type
	}
	return ev, nil
}

// next is the stream's next server-sent event.
func (s *EventStream) next() (sse.Event, error) {
	if s.err != nil {
		return sse.Event{}, s.err
	}
	se, err := s.sse.Next()
	if err != nil {
		s.err = s.streamError(err)
		s.Close()
		return sse.Event{}, s.err
	}
	return se, nil
}

// Close ends the stream. It is safe to call more than once.
func (s *EventStream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		err = s.body.Close()
		if s.err == nil {
			s.err = errStreamClosed
		}
	})
	return err
}

// errStreamClosed is what Next returns after Close.
var errStreamClosed = errors.New("the event stream was closed")

// streamError explains why reading the stream stopped.
func (s *EventStream) streamError(err error) error {
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	switch {
	case errors.Is(err, io.EOF):
		return ErrEventStreamClosed
	case errors.Is(err, sse.ErrTooLarge):
		// The client gave up, not the daemon.
		return fmt.Errorf("reading the daemon's events: %w (%d MiB)", err, MaxEventSize>>20)
	}
	return fmt.Errorf("%w: %w", ErrEventStreamClosed, err)
}
