package face

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// events is what after gives, as strings, and its error.
func events(b *replayBuffer, session, stream string, index int) ([]string, error) {
	var out []string
	got, err := b.after(streamKey{session, stream}, index)
	for _, data := range got {
		out = append(out, string(data))
	}
	return out, err
}

func TestReplayAfter(t *testing.T) {
	b := newReplayBuffer()
	for _, e := range []string{"", "one", "two", "three"} {
		b.append(streamKey{"s1", "A"}, []byte(e), nil)
	}
	got, err := events(b, "s1", "A", 1)
	if err != nil || strings.Join(got, ",") != "two,three" {
		t.Errorf("after 1: %q %v", got, err)
	}
	if got, err := events(b, "s1", "A", 3); err != nil || len(got) != 0 {
		t.Errorf("after the last: %q %v", got, err)
	}
	if _, err := events(b, "s1", "A", 4); err == nil {
		t.Error("after an event never sent: no error")
	}
	if _, err := events(b, "s2", "A", 0); !errors.Is(err, errReplayGone) {
		t.Errorf("another session's stream: %v", err)
	}
	b.free("s1", "A")
	if _, err := events(b, "s1", "A", 0); !errors.Is(err, errReplayGone) {
		t.Errorf("a freed stream: %v", err)
	}
	if n, streams := b.size(); n != 0 || streams != 0 {
		t.Errorf("after free: %d bytes in %d streams", n, streams)
	}
}

func TestReplayBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newReplayBuffer()
	b.now = func() time.Time { return now }
	b.streamCap, b.totalCap = 10, 25
	k := streamKey{"s", "A"}
	for i := range 5 {
		b.append(k, []byte(fmt.Sprintf("event%d", i)), nil) // 6 bytes each
	}
	// The stream keeps its newest events within its cap; a resumption
	// from before them is refused, not given a gap.
	if got, err := b.after(k, 3); err != nil || len(got) != 1 || string(got[0]) != "event4" {
		t.Errorf("after 3: %q %v", got, err)
	}
	if _, err := b.after(k, 1); !errors.Is(err, errReplayGone) || !strings.Contains(err.Error(), "at most 10 bytes") {
		t.Errorf("after 1, dropped: %v", err)
	}
	// The buffer keeps its total within its cap: the stream written
	// longest ago goes.
	now = now.Add(time.Second)
	b.append(streamKey{"s", "B"}, []byte("0123456789"), nil)
	now = now.Add(time.Second)
	b.append(streamKey{"s", "C"}, []byte("0123456789"), nil)
	if total, _ := b.size(); total > 25 {
		t.Errorf("total %d bytes, cap 25", total)
	}
	if _, err := b.after(k, 3); !errors.Is(err, errReplayGone) {
		t.Errorf("the oldest stream, evicted: %v", err)
	}
	// A stream not written for the TTL is gone.
	now = now.Add(b.ttl + time.Second)
	if _, err := b.after(streamKey{"s", "C"}, -1); !errors.Is(err, errReplayGone) {
		t.Errorf("an expired stream: %v", err)
	}
	b.append(streamKey{"s", "D"}, []byte("x"), nil) // sweeps
	if _, streams := b.size(); streams != 1 {
		t.Errorf("%d streams after the sweep, want 1", streams)
	}
	b.sessionClosed("s")
	if total, streams := b.size(); total != 0 || streams != 0 {
		t.Errorf("after the session closed: %d bytes in %d streams", total, streams)
	}
}

func TestParseEventID(t *testing.T) {
	for id, want := range map[string]bool{
		"ABC_0": true, "ABC_12": true, "_3": true,
		"ABC": false, "ABC_": false, "ABC_-1": false, "ABC_+1": false, "ABC_01": false,
		"A_B_1": false, "ABC_1x": false, "ABC_9999999999": false,
	} {
		if _, _, ok := parseEventID(id); ok != want {
			t.Errorf("parseEventID(%q) ok %v, want %v", id, ok, want)
		}
	}
}

// FuzzParseEventID: what parses is an id the face could have sent, and
// prints back as it was read.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"ABC_0", "_17", "x_1_2", "", "_", "A_007", "A_-1", "A_+1", "A_99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		stream, index, ok := parseEventID(id)
		if !ok {
			return
		}
		if index < 0 || strings.Contains(stream, "_") || eventID(stream, index) != id {
			t.Errorf("parseEventID(%q) = %q, %d", id, stream, index)
		}
	})
}

// size is the bytes the buffer holds, and its streams.
func (b *replayBuffer) size() (bytes, streams int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total, len(b.streams)
}
