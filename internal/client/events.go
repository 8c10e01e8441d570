package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/plexus-mcp/plexus/internal/apitype"
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
	sse  *sseReader

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
	return &EventStream{ctx: ctx, body: resp.Body, sse: newSSEReader(resp.Body, MaxEventSize)}, nil
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
	if s.err != nil {
		return apitype.Event{}, s.err
	}
	se, err := s.sse.next()
	if err != nil {
		s.err = s.streamError(err)
		s.Close()
		return apitype.Event{}, s.err
	}
	var ev apitype.Event
	if err := json.Unmarshal([]byte(se.data), &ev); err != nil {
		return apitype.Event{}, fmt.Errorf("decoding a %q event from the daemon: %w (is the daemon the same version as this program?)", se.typ, err)
	}
	if ev.Type == "" {
		// The SSE event name carries the type too; the data should repeat it.
		ev.Type = se.typ
	}
	return ev, nil
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
	case errors.Is(err, errEventTooLarge):
		// The client gave up, not the daemon.
		return fmt.Errorf("reading the daemon's events: %w", err)
	}
	return fmt.Errorf("%w: %w", ErrEventStreamClosed, err)
}

// errEventTooLarge is an event beyond the reader's limit.
var errEventTooLarge = fmt.Errorf("an event is larger than %d MiB", MaxEventSize>>20)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	typ  string // the event name, "message" when none was given
	data string // the data lines joined with "\n"
}

// sseReader parses a text/event-stream as the HTML Living Standard
// ("Server-sent events", §9.2.6 Interpreting an event stream) says: lines
// end in CRLF, LF or CR alone; a line starting with ":" is a comment; a
// blank line dispatches the event gathered so far, unless it has no data;
// an event cut off by the end of the stream is dropped.
type sseReader struct {
	sc  *bufio.Scanner
	max int
	// first is set until the first line has been read, whose leading
	// UTF-8 BOM, if any, is not part of it.
	first bool
}

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	sc := bufio.NewScanner(r)
	// Room for the longest data line: the field name and the separator
	// besides the data itself.
	sc.Buffer(make([]byte, 0, 4096), maxEvent+len("data: ")+2)
	sc.Split(sseLines())
	return &sseReader{sc: sc, max: maxEvent, first: true}
}

// next returns the next event with data. It returns io.EOF at the end of
// the stream, errEventTooLarge for an event over the limit, and the
// reader's error otherwise.
func (r *sseReader) next() (sseEvent, error) {
	var (
		typ     string
		data    strings.Builder
		hasData bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.first {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			r.first = false
		}
		if len(line) == 0 {
			if !hasData {
				// An event without data is not dispatched; its name is
				// forgotten with it.
				typ = ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return sseEvent{typ: typ, data: data.String()}, nil
		}
		if line[0] == ':' {
			continue // a comment: the daemon's keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			if data.Len()+len(value)+1 > r.max {
				return sseEvent{}, errEventTooLarge
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
		// "id" and "retry" serve reconnection, which the client does not
		// do: a new connection starts from the current state instead.
		// Unknown fields are ignored, as the standard says.
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sseEvent{}, errEventTooLarge
		}
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// sseLines returns a bufio.SplitFunc that splits at CRLF, LF or a lone CR.
// A CR is a line end at once, without waiting to see whether an LF follows
// (a stream that ends its lines with CR alone must not stall until the next
// byte arrives); an LF right after it is then skipped.
func sseLines() bufio.SplitFunc {
	afterCR := false
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if afterCR && len(data) > 0 {
			afterCR = false
			if data[0] == '\n' {
				return 1, nil, nil
			}
		}
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			if data[i] == '\r' {
				if i+1 < len(data) {
					if data[i+1] == '\n' {
						return i + 2, data[:i], nil
					}
				} else {
					afterCR = true
				}
			}
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			// A last line without its end: returned so that the reader
			// sees it, and then drops the unfinished event with it.
			return len(data), data, nil
		}
		return 0, nil, nil
	}
}
