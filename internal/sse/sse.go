// Package sse reads and writes server-sent event streams
// (text/event-stream). Reader is the one reader of them in Plexus: the
// settings client's event stream, the stdio bridge's relay of the face's
// answers, and (internal/upstream) a remote server's streams — the
// filter the SDK's client reads them through, the standalone stream and a
// session renewal's answer. WriteEvent, AppendEvent and AppendData are the
// one writer: the daemon's event API, the face's answers, and the streams
// the upstream passes on to the SDK's client.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
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

// RetryDelay is the reconnection delay the event's retry field sets, in
// milliseconds as the standard has it; ok is false when it sets none, or
// one too long for a time.Duration.
func (ev Event) RetryDelay() (d time.Duration, ok bool) {
	n, err := strconv.ParseInt(ev.Retry, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
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
	// besides the data itself. A line of any field longer than that is
	// ErrTooLarge (the scanner's bound is its buffer's size if larger).
	max := maxEvent + len("data: ") + 2
	sc.Buffer(make([]byte, 0, min(4096, max)), max)
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

// WriteEvent writes ev to b as AppendEvent appends it.
func WriteEvent(b *bytes.Buffer, ev Event) {
	b.Write(AppendEvent(b.AvailableBuffer(), ev))
}

// AppendEvent appends ev to dst as Reader reads it back: its type, its id
// and retry fields, and a data line for each line of its data (a CR in
// data, which JSON never holds raw, would be read back as a line end). An event
// without a type is fields only (an id where a resumed stream goes on,
// say): it carries no data, and a reader dispatches nothing for it.
func AppendEvent(dst []byte, ev Event) []byte {
	dst = appendFields(dst, ev.Type, ev.ID, ev.Retry)
	if ev.Type != "" {
		dst = appendData(dst, ev.Data, strings.IndexByte)
	}
	return append(dst, '\n')
}

// AppendData appends an event of type typ (not "") and id ("" for none)
// whose data is data, as AppendEvent appends it, for a writer that holds
// its data as bytes: the face's answers, which it writes without copying
// them into a string.
func AppendData(dst []byte, typ, id string, data []byte) []byte {
	dst = appendFields(dst, typ, id, "")
	dst = appendData(dst, data, bytes.IndexByte)
	return append(dst, '\n')
}

// appendFields appends the fields that are set; the type is written even
// when it is "message", the default, as every writer of ours always has.
func appendFields(dst []byte, typ, id, retry string) []byte {
	for _, f := range [...]struct{ name, value string }{{"event: ", typ}, {"id: ", id}, {"retry: ", retry}} {
		if f.value != "" {
			dst = append(append(append(dst, f.name...), f.value...), '\n')
		}
	}
	return dst
}

// appendData appends data as data lines, one for each of its lines: a
// line end inside data would otherwise end the event there.
func appendData[D string | []byte](dst []byte, data D, index func(D, byte) int) []byte {
	for {
		dst = append(dst, "data: "...)
		i := index(data, '\n')
		if i < 0 {
			return append(append(dst, data...), '\n')
		}
		dst = append(append(dst, data[:i]...), '\n')
		data = data[i+1:]
	}
}
