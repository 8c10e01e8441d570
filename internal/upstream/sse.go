package upstream

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"
)

// sseEvent is one server-sent event, as the HTML standard's event stream
// interpretation builds it.
type sseEvent struct {
	ID    string
	Name  string // "event:"; "" means "message"
	Data  []byte // "data:" lines joined by "\n"
	Retry time.Duration
}

// readEvents reads server-sent events from r until it ends, calling fn for
// each event that carries data, id or retry (empty ones dispatch nothing).
// Lines end in LF or CRLF (a lone CR, which the standard also allows, is
// not seen as a line end).
// A line longer than max ends the stream with bufio.ErrTooLong. fn
// returning false stops the reading. The error is nil at a clean end.
func readEvents(r io.Reader, max int, fn func(sseEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(4096, max)), max)
	var ev sseEvent
	var data bytes.Buffer
	hasData, any := false, false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 { // dispatch
			if any {
				if hasData {
					ev.Data = bytes.Clone(data.Bytes())
				}
				if !fn(ev) {
					return nil
				}
			}
			ev, hasData, any = sseEvent{}, false, false
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData, any = true, true
		case "event":
			ev.Name, any = string(value), true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID, any = string(value), true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.Retry, any = time.Duration(n)*time.Millisecond, true
			}
		}
	}
	return sc.Err()
}
