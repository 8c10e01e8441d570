package upstream

import (
	"encoding/json"
	"testing"
	"time"
)

// TestFrameCallsExpire: frame calls past their deadline are answered
// errTimedOut by the connection's one timer — also a call whose deadline
// is earlier than the one the timer was set for — and a call without one,
// or answered in time, gets its own answer.
func TestFrameCallsExpire(t *testing.T) {
	var f frameCalls
	now := time.Now()
	expect := func(id string, deadline time.Time) chan frameAnswer {
		ch, err := f.expect(id, deadline)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	late := expect(framePrefix+"1", now.Add(time.Hour)) // sets the timer an hour out
	soon := expect(framePrefix+"2", now.Add(30*time.Millisecond))
	later := expect(framePrefix+"3", now.Add(60*time.Millisecond))
	never := expect(framePrefix+"4", time.Time{})
	answered := expect(framePrefix+"5", now.Add(time.Hour))
	wait := func(name string, ch chan frameAnswer) frameAnswer {
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer in 30 s", name)
			return frameAnswer{}
		}
	}
	for name, ch := range map[string]chan frameAnswer{"30 ms": soon, "60 ms": later} {
		if r := wait(name, ch); r.err != errTimedOut {
			t.Errorf("the call due in %s was answered %+v, want errTimedOut", name, r)
		}
	}
	if !f.deliverFrame([]byte(`{"jsonrpc":"2.0","id":"` + framePrefix + `5","result":{"ok":true}}`)) {
		t.Fatal("an answer in time was not delivered")
	}
	if r := wait("in time", answered); r.err != nil || string(r.result) != `{"ok":true}` {
		t.Errorf("the call answered in time got %+v", r)
	}
	if !f.deliverFrame([]byte(`{"jsonrpc":"2.0","id":"` + framePrefix + `4","result":{}}`)) {
		t.Fatal("an answer to the call without a deadline was not delivered")
	}
	if r := wait("no deadline", never); r.err != nil {
		t.Errorf("the call without a deadline got %+v", r)
	}
	f.mu.Lock()
	_, pending := f.pending[framePrefix+"1"]
	next := f.expiry.next
	f.mu.Unlock()
	if !pending || !next.Equal(now.Add(time.Hour)) {
		t.Errorf("the hour-long call: pending %v, timer set for %v; want pending, set for its deadline", pending, next)
	}
	select {
	case r := <-late:
		t.Errorf("the hour-long call was answered %+v", r)
	default:
	}
	f.streamEnded(json.Unmarshal([]byte("x"), new(any)))
	if r := wait("at the end", late); r.err == nil || r.err == errTimedOut {
		t.Errorf("at the stream's end the call got %+v, want the stream's error", r)
	}
}
