package sse

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// maxEvent is the limit of the tests, the client's.
const maxEvent = 16 << 20

// parseAll reads every event of in, delivered in reads of at most chunk
// bytes, until the reader's error.
func parseAll(in []byte, chunk, maxEvent int) ([]Event, error) {
	r := NewReader(&chunkReader{data: in, n: chunk}, maxEvent)
	var out []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// chunkReader returns at most n bytes per Read, as a network would.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Event
	}{
		{"LF", "event: a\ndata: 1\n\n", []Event{{Type: "a", Data: "1"}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []Event{{Type: "a", Data: "1"}}},
		{"CR", "event: a\rdata: 1\r\r", []Event{{Type: "a", Data: "1"}}},
		{"multi-line data", "data: a\ndata:b\ndata\ndata:  c\n\n", []Event{{Type: "message", Data: "a\nb\n\n c"}}},
		{"comments", ":hi\n: there\n\n:\ndata: x\n:mid\n\n", []Event{{Type: "message", Data: "x"}}},
		{"no data, no event", "event: a\n\ndata: 1\n\n", []Event{{Type: "message", Data: "1"}}},
		{"BOM", "\ufeffdata: 1\n\n", []Event{{Type: "message", Data: "1"}}},
		{"unknown fields", "foo: bar\nfoo\ndata: 1\n\n", []Event{{Type: "message", Data: "1"}}},
		{"id and retry", "id: 3\nretry: 10\ndata: 1\n\ndata: 2\n\n", []Event{{Type: "message", Data: "1", ID: "3", Retry: "10"}, {Type: "message", Data: "2"}}},
		{"bad id and retry", "id: 3\x004\nretry: 1x\ndata: 1\n\n", []Event{{Type: "message", Data: "1"}}},
		{"cut off", "data: 1\n\ndata: 2\n", []Event{{Type: "message", Data: "1"}}},
		{"colon in value", "data: {\"a\":1}\n\n", []Event{{Type: "message", Data: `{"a":1}`}}},
		{"empty data", "data:\n\n", []Event{{Type: "message", Data: ""}}},
	} {
		for _, chunk := range []int{1, 2, 3, 4096} {
			got, err := parseAll([]byte(tc.in), chunk, maxEvent)
			if err != io.EOF {
				t.Errorf("%s/%d: err %v", tc.name, chunk, err)
			}
			if !equalEvents(got, tc.want) {
				t.Errorf("%s/%d: got %q, want %q", tc.name, chunk, got, tc.want)
			}
		}
	}
}

func TestSSEReaderTooLarge(t *testing.T) {
	// Over the limit in one line, and over it in several.
	for _, in := range []string{
		"data: 1\n\ndata: " + strings.Repeat("x", 200) + "\n\n",
		"data: 1\n\n" + strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 5) + "\n",
	} {
		got, err := parseAll([]byte(in), 7, 100)
		if !errors.Is(err, ErrTooLarge) || !equalEvents(got, []Event{{Type: "message", Data: "1"}}) {
			t.Errorf("got %q, %v", got, err)
		}
	}
	// A line of another field over the limit too: its end cannot be found.
	got, err := parseAll([]byte("data: 1\n\nid: "+strings.Repeat("x", 200)+"\ndata: 2\n\n"), 7, 100)
	if !errors.Is(err, ErrTooLarge) || !equalEvents(got, []Event{{Type: "message", Data: "1"}}) {
		t.Errorf("a long id line: got %q, %v", got, err)
	}
	// Exactly at the limit is fine.
	got, err = parseAll([]byte("data: "+strings.Repeat("x", 99)+"\n\n"), 7, 100)
	if err != io.EOF || len(got) != 1 {
		t.Errorf("at the limit: %d events, %v", len(got), err)
	}
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineEnd is what the standard allows to end a line; CRLF is tried first.
var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// referenceSSE parses a whole stream at once, as the standard describes it,
// with none of the streaming reader's buffering: the oracle of FuzzSSE.
func referenceSSE(in string) []Event {
	in = strings.TrimPrefix(in, "\ufeff")
	lines := lineEnd.Split(in, -1)
	lines = lines[:len(lines)-1] // the unfinished last line
	var out []Event
	var typ, id, retry string
	var data []string
	for _, line := range lines {
		switch {
		case line == "":
			if data != nil {
				if typ == "" {
					typ = "message"
				}
				out = append(out, Event{Type: typ, Data: strings.Join(data, "\n"), ID: id, Retry: retry})
			}
			typ, id, retry, data = "", "", "", nil
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "id":
				if !strings.Contains(value, "\x00") {
					id = value
				}
			case "retry":
				if value != "" && strings.Trim(value, "0123456789") == "" {
					retry = value
				}
			case "data":
				data = append(data, value)
			}
		}
	}
	return out
}

// FuzzSSE checks the stream reader against the reference parser on any
// input cut into any chunks, and that data written as data lines is read
// back exactly. It must never panic.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("event: server\ndata: {\"seq\":1}\n\n"), uint8(3))
	f.Add([]byte(": keep-alive\r\n\r\ndata: a\r\ndata: b\r\n\r\n"), uint8(0))
	f.Add([]byte("data: a\rdata: b\r\r\ndata: c\n\r\n"), uint8(1))
	f.Add([]byte("\ufeffdata:x\n\nevent\ndata\n\n:\n"), uint8(9))
	f.Add([]byte("data: line one\nline two\r\n"), uint8(2))
	f.Add([]byte("id: a\x00b\nretry: 99999999999999999999\ndata: x\n\nretry: 250\ndata\n\n"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		n := int(chunk)%64 + 1

		// Any stream: the same events as the reference.
		got, err := parseAll(in, n, maxEvent)
		if err != io.EOF {
			t.Fatalf("err %v", err)
		}
		if want := referenceSSE(string(in)); !equalEvents(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}

		// Each event written back reads back the same, and its retry
		// delay, if any, is one.
		var back []byte
		for _, ev := range got {
			back = AppendEvent(back, ev)
			if d, ok := ev.RetryDelay(); ok && d < 0 || !ok && ev.Retry != "" && len(ev.Retry) < 13 {
				t.Fatalf("retry %q: delay %v, %v", ev.Retry, d, ok)
			}
		}
		if again, err := parseAll(back, n, maxEvent); err != io.EOF || !equalEvents(again, got) {
			t.Fatalf("written back as %q: read %q, %v; want %q", back, again, err, got)
		}

		// With a small limit: no panic, and what comes before the error
		// is what the reference has.
		small, err := parseAll(in, n, 16)
		if err != io.EOF && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("small limit: err %v", err)
		}
		if want := referenceSSE(string(in)); len(small) > len(want) || !equalEvents(small, want[:len(small)]) {
			t.Fatalf("small limit: got %q, want a prefix of %q", small, want)
		}

		// in as the data of one event, between a keep-alive and a named
		// event: read back whole, its line ends made "\n".
		var b bytes.Buffer
		b.WriteString(": keep-alive\r\n")
		for _, line := range lineEnd.Split(string(in), -1) {
			b.WriteString("data: " + line + "\r\n")
		}
		b.WriteString("\r\nevent: next\ndata: end\n\n")
		got, err = parseAll(b.Bytes(), n, maxEvent)
		want := []Event{{Type: "message", Data: lineEnd.ReplaceAllString(string(in), "\n")}, {Type: "next", Data: "end"}}
		if err != io.EOF || !equalEvents(got, want) {
			t.Fatalf("as data: got %q, %v\nwant %q", got, err, want)
		}
	})
}

// TestNextAnyKeepsPrimingEvents: NextAny also returns an event that
// carries only an id or a retry, which Next skips.
func TestNextAnyKeepsPrimingEvents(t *testing.T) {
	in := "id: 7\n\nevent: x\n\nretry: 5\n\ndata: 1\nid: 8\n\n"
	r := NewReader(strings.NewReader(in), maxEvent)
	var got []Event
	for {
		ev, err := r.NextAny()
		if err != nil {
			break
		}
		got = append(got, ev)
	}
	want := []Event{{ID: "7"}, {Retry: "5"}, {Type: "message", Data: "1", ID: "8"}}
	if !equalEvents(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWriteEventReadsBack: what WriteEvent writes, Reader reads back as
// the same events — type, multi-line data, id and retry — and a
// fields-only event is one that NextAny returns and Next skips.
func TestWriteEventReadsBack(t *testing.T) {
	events := []Event{
		{Type: "message", Data: `{"jsonrpc":"2.0","id":1,"result":{}}`, ID: "s-1"},
		{ID: "s-1b"}, // fields only
		{Type: "ping", Data: "a\nb", Retry: "500"},
		{Type: "message", Data: "x", ID: "s-2", Retry: "10"},
	}
	var b bytes.Buffer
	for _, ev := range events {
		WriteEvent(&b, ev)
	}
	written := b.String()
	for _, bare := range []bool{true, false} {
		r := NewReader(strings.NewReader(written), 1<<20)
		for _, want := range events {
			if !bare && want.Type == "" {
				continue
			}
			next := r.Next
			if bare {
				next = r.NextAny
			}
			got, err := next()
			if err != nil {
				t.Fatalf("reading back %+v (NextAny %v): %v", want, bare, err)
			}
			if got != want {
				t.Errorf("read back %+v, wrote %+v (NextAny %v)", got, want, bare)
			}
		}
		if got, err := r.NextAny(); err != io.EOF {
			t.Errorf("after the events: %+v, %v; want io.EOF", got, err)
		}
	}
}

// TestRetryDelay: a retry field is milliseconds; none, or one past what a
// time.Duration holds, is no delay.
func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		retry string
		want  time.Duration
		ok    bool
	}{
		{"250", 250 * time.Millisecond, true},
		{"0", 0, true},
		{"", 0, false},
		{"9223372036854", 9223372036854 * time.Millisecond, true},
		{"9223372036855", 0, false}, // past MaxInt64 nanoseconds
		{"99999999999999999999", 0, false},
	} {
		if d, ok := (Event{Retry: tc.retry}).RetryDelay(); d != tc.want || ok != tc.ok {
			t.Errorf("retry %q: %v, %v; want %v, %v", tc.retry, d, ok, tc.want, tc.ok)
		}
	}
}

// TestAppendData: AppendData writes what AppendEvent writes for the same
// event, and appends to a buffer with room without allocating (the face's
// answers go out through it).
func TestAppendData(t *testing.T) {
	for _, ev := range []Event{
		{Type: "message", Data: `{"jsonrpc":"2.0","id":1,"result":{}}`, ID: "s_1"},
		{Type: "message", Data: "a\n\nb\n"},
		{Type: "ping", Data: ""},
	} {
		got := AppendData([]byte("x"), ev.Type, ev.ID, []byte(ev.Data))
		if want := AppendEvent([]byte("x"), ev); !bytes.Equal(got, want) {
			t.Errorf("AppendData %q, AppendEvent %q", got, want)
		}
	}
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = AppendData(buf[:0], "message", "abc_1", data) }); n != 0 {
		t.Errorf("AppendData allocates %v times an event", n)
	}
}
