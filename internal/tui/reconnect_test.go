package tui

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// TestReconnectClearsTheConnectionError: once the daemon answers again, the
// screen no longer says it cannot be reached — also when a retry failed
// while it was away, which is what a slow restart (a race-built daemon)
// looks like.
func TestReconnectClearsTheConnectionError(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	m.daemonMsg(connectedMsg{err: errors.New("the daemon is not running")})
	if m.errMsg == "" {
		t.Fatal("a failed connect shows no error")
	}
	m.daemonMsg(connectedMsg{list: &apitype.ServerList{}})
	if m.errMsg != "" {
		t.Errorf("after reconnecting the screen still says %q", m.errMsg)
	}
}

// TestOlderListDoesNotOverwriteNewer: the lists asked of the daemon come
// back in any order; one asked while a server was starting, arriving
// after the one asked once it was ready, must not put it back to
// "starting" (no event would come to correct it).
func TestOlderListDoesNotOverwriteNewer(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	m.refresh() // list 1
	m.refresh() // list 2 (their answers are given by hand below)
	starting := &apitype.ServerList{Servers: []apitype.ServerStatus{{Name: "example", State: apitype.StateStarting}}}
	ready := &apitype.ServerList{Servers: []apitype.ServerStatus{{Name: "example", State: apitype.StateReady, Tools: 6}}}
	m.daemonMsg(serversMsg{list: ready, n: 2})
	m.daemonMsg(serversMsg{list: starting, n: 1}) // the older answer, late
	if s, _ := m.selected(); s.State != apitype.StateReady || s.Tools != 6 {
		t.Fatalf("after the older list came last: %+v", s)
	}
	m.refresh()                                   // list 3
	m.daemonMsg(serversMsg{list: starting, n: 3}) // a newer one is shown
	if s, _ := m.selected(); s.State != apitype.StateStarting {
		t.Fatalf("a newer list was not shown: %+v", s)
	}
}

// TestEventWhileAwaitedWinsOverAnswer: an answer tells a server's status as
// it was at some moment while it was awaited; an event that came meanwhile
// may be newer, and no later event would correct an older answer shown over
// it. Of the two, the state that began later is shown.
func TestEventWhileAwaitedWinsOverAnswer(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	t0 := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	starting := apitype.ServerStatus{Name: "down", State: apitype.StateStarting, Since: t0}
	failed := apitype.ServerStatus{Name: "down", State: apitype.StateFailed, LastError: "start: no such file", Since: t0.Add(time.Microsecond)}
	stream := &client.EventStream{}
	m.stream = stream
	event := func(ev apitype.Event) { m.daemonMsg(eventMsg{stream: stream, ev: ev}) }

	// A save's answer, arriving after the event that said the server failed.
	m.write("added down", nil)
	event(apitype.Event{Type: apitype.EventServer, Status: &failed})
	m.daemonMsg(doneMsg{what: "added down", server: &starting, read: true})
	if s, _ := m.server("down"); s.State != apitype.StateFailed {
		t.Fatalf("after the save's older answer: %+v", s)
	}

	// A write's answer whose state began after the event's: the answer is
	// shown ("ready"), not the "starting" its event announced before it.
	ready := apitype.ServerStatus{Name: "down", State: apitype.StateReady, Tools: 1, Since: t0.Add(2 * time.Microsecond)}
	m.write("restarted down", nil)
	event(apitype.Event{Type: apitype.EventServer, Status: &starting})
	m.daemonMsg(doneMsg{what: "restarted down", server: &ready, read: true})
	if s, _ := m.server("down"); s.State != apitype.StateReady {
		t.Fatalf("a newer answer was put back to the older event's state: %+v", s)
	}

	// The "starting" event sent before the answer was read, arriving after
	// it: the answer's newer state stays.
	event(apitype.Event{Type: apitype.EventServer, Status: &starting})
	if s, _ := m.server("down"); s.State != apitype.StateReady {
		t.Fatalf("an older event arriving after the answer was shown over it: %+v", s)
	}

	// A list asked before the server was removed, answered after.
	m.refresh()
	event(apitype.Event{Type: apitype.EventServerRemoved, Server: "down"})
	m.daemonMsg(serversMsg{list: &apitype.ServerList{Servers: []apitype.ServerStatus{starting}}, n: m.listAsked})
	if s, ok := m.server("down"); ok {
		t.Fatalf("a removed server is back from an older list: %+v", s)
	}

	// With nothing awaited, the events are forgotten: a list is shown as it is.
	m.refresh()
	m.daemonMsg(serversMsg{list: &apitype.ServerList{Servers: []apitype.ServerStatus{starting}}, n: m.listAsked})
	if s, _ := m.server("down"); s.State != apitype.StateStarting {
		t.Fatalf("a list after the events ended was not shown as it is: %+v", s)
	}
}
