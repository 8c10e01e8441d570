package upstream

import (
	"errors"
	"time"
)

// A frame call's time limit (CallRawWithin) is kept by its connection,
// not by a context of its own: a context with a deadline cost each call
// eight allocations and a timer put on and taken off the runtime's heap.
// The connection keeps one timer, set for the earliest deadline of its
// calls in flight. A new call's deadline is almost always later than
// those before it (the limit is the server's, the same for each call), so
// the timer is set once and moved only when it fires: then the calls past
// their deadline are answered errTimedOut and it is set for the next.

// errTimedOut is the answer a frame call gets past its deadline.
var errTimedOut = errors.New("the call's time limit passed")

// expiry is the timer of a connection's frame calls. Its owner's lock
// guards it.
type expiry struct {
	t    *time.Timer
	next time.Time // when t fires; zero: it is not set
}

// due makes sure the timer fires by deadline (zero: none), calling fire.
func (e *expiry) due(deadline time.Time, fire func()) {
	if deadline.IsZero() || !e.next.IsZero() && !deadline.Before(e.next) {
		return
	}
	e.next = deadline
	if e.t == nil {
		e.t = time.AfterFunc(time.Until(deadline), fire)
		return
	}
	e.t.Reset(time.Until(deadline))
}

// expire answers the calls past their deadline with errTimedOut and sets
// the timer for the earliest deadline left.
func (f *frameCalls) expire() {
	f.mu.Lock()
	now := time.Now()
	var late []frameWait
	next := time.Time{}
	for id, w := range f.pending {
		switch {
		case w.deadline.IsZero():
		case !w.deadline.After(now):
			late = append(late, w)
			delete(f.pending, id)
		case next.IsZero() || w.deadline.Before(next):
			next = w.deadline
		}
	}
	f.expiry.next = time.Time{}
	f.expiry.due(next, f.expire)
	f.mu.Unlock()
	for _, w := range late {
		w.ch <- frameAnswer{err: errTimedOut}
	}
}
