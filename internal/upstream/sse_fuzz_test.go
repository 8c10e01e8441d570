package upstream

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReadEvents(t *testing.T) {
	in := ": comment\nid: 7\nretry: 250\ndata: {\"a\":\ndata: 1}\n\nevent: ping\ndata:x\n\nid: 8\n\ndata: no end"
	var got []sseEvent
	if err := readEvents(strings.NewReader(in), 1<<10, func(e sseEvent) bool { got = append(got, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3 (an unterminated one is not dispatched): %+v", len(got), got)
	}
	if e := got[0]; e.ID != "7" || e.Retry != 250*time.Millisecond || string(e.Data) != "{\"a\":\n1}" || e.Name != "" {
		t.Fatalf("first event %+v", e)
	}
	if e := got[1]; e.Name != "ping" || string(e.Data) != "x" {
		t.Fatalf("second event %+v", e)
	}
	if e := got[2]; e.ID != "8" || e.Data != nil {
		t.Fatalf("third event %+v", e)
	}
	long := "data: " + strings.Repeat("x", 2048) + "\n\n"
	if err := readEvents(strings.NewReader(long), 1<<10, func(sseEvent) bool { return true }); err == nil {
		t.Fatal("a line over the limit was accepted")
	}
}

// FuzzReadEvents: any byte stream is read without panic, and no event's
// data is longer than the stream.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{"", "data: x\n\n", "id: 1\nretry: 10\n\n", ":c\r\ndata:\n\n", "event: message\ndata: {}\n\ndata", "id: a\x00b\n\n", "retry: 99999999999\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readEvents(bytes.NewReader(b), 1<<12, func(e sseEvent) bool {
			if len(e.Data) > len(b) || e.Retry < 0 {
				t.Fatalf("event %+v from %d bytes", e, len(b))
			}
			return true
		})
	})
}
