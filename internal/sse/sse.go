// Package sse reads server-sent event streams (text/event-stream), as the
// daemon's event API and the MCP face's streamable HTTP answers are: the
// settings client and the stdio bridge of plexus mcp share this reader.
// WriteEvent writes an event back in the form the reader reads (the
// upstream's filter of a remote server's streams passes events on with it).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// ErrTooLarge is an event over the reader's limit.
var ErrTooLarge = errors.New("an event is larger than the limit")

// Event is one dispatched server-sent event.
type Event struct {
	Type string // the event name, "message" when none was given
	Data string // the data lines joined with "\n"
	// ID and Retry are the event's own id and retry fields ("" when it
	// has none), which a reader that resumes a stream needs: the standard
	// ignores an id holding a NUL and a retry that is not all digits.
	ID    string
	Retry string
}

// Reader parses a text/event-stream as the HTML Living Standard
// ("Server-sent events", §9.2.6 Interpreting an event stream) says: lines
// end in CRLF, LF or CR alone; a line starting with ":" is a comment; a
// blank line dispatches the event gathered so far, unless it has no data;
// an event cut off by the end of the stream is dropped.
type Reader struct {
	sc  *bufio.Scanner
	max int
	// first is set until the first line has been read, whose leading
	// UTF-8 BOM, if any, is not part of it.
	first bool
}

// NewReader reads events from r; an event's data may be maxEvent bytes.
func NewReader(r io.Reader, maxEvent int) *Reader {
	sc := bufio.NewScanner(r)
	// Room for the longest data line: the field name and the separator
	// besides the data itself.
	sc.Buffer(make([]byte, 0, 4096), maxEvent+len("data: ")+2)
	sc.Split(lines())
	return &Reader{sc: sc, max: maxEvent, first: true}
}

// Next returns the next event with data. It returns io.EOF at the end of
// the stream, ErrTooLarge for an event over the limit, and the reader's
// error otherwise.
func (r *Reader) Next() (Event, error) { return r.next(false) }

// NextAny is Next that also returns an event without data that carries an
// id or a retry (a priming event, MCP's SEP-1699): the standard does not
// dispatch it, but a reader passing the stream on to one that resumes it
// must keep its id. Such an event's Type and Data are "".
func (r *Reader) NextAny() (Event, error) { return r.next(true) }

func (r *Reader) next(bare bool) (Event, error) {
	var (
		typ, id, retry string
		data           strings.Builder
		hasData        bool
	)
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.first {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			r.first = false
		}
		if len(line) == 0 {
			if !hasData {
				if bare && (id != "" || retry != "") {
					return Event{ID: id, Retry: retry}, nil
				}
				// An event without data is not dispatched; its name is
				// forgotten with it.
				typ, id, retry = "", "", ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return Event{Type: typ, Data: data.String(), ID: id, Retry: retry}, nil
		}
		if line[0] == ':' {
			continue // a comment: a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				id = string(value)
			}
		case "retry":
			if len(value) > 0 && len(bytes.Trim(value, "0123456789")) == 0 {
				retry = string(value)
			}
		case "data":
			if data.Len()+len(value)+1 > r.max {
				return Event{}, ErrTooLarge
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
		// Unknown fields are ignored, as the standard says.
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrTooLarge
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}

// lines returns a bufio.SplitFunc that splits at CRLF, LF or a lone CR.
// A CR is a line end at once, without waiting to see whether an LF follows
// (a stream that ends its lines with CR alone must not stall until the next
// byte arrives); an LF right after it is then skipped.
func lines() bufio.SplitFunc {
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

// WriteEvent writes ev to b as Reader reads it back: its type (unless
// "message", the default), its id and retry fields, and a data line for
// each line of its data. An event without a type is fields only (an id
// where a resumed stream goes on, say): it carries no data, and a reader
// dispatches nothing for it.
func WriteEvent(b *bytes.Buffer, ev Event) {
	if ev.Type != "" && ev.Type != "message" {
		b.WriteString("event: " + ev.Type + "\n")
	}
	if ev.ID != "" {
		b.WriteString("id: " + ev.ID + "\n")
	}
	if ev.Retry != "" {
		b.WriteString("retry: " + ev.Retry + "\n")
	}
	if ev.Type != "" {
		for line := range strings.SplitSeq(ev.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
	}
	b.WriteByte('\n')
}
