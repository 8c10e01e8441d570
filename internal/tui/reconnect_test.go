package tui

import (
	"context"
	"errors"
	"strings"
	"testing"

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

// TestAnswersAndEventsInEventOrder: answers (lists, writes' results) and
// events come on two connections in any order; of two statuses of a
// server, the one as of the later event is shown, whichever arrives last
// (order.go).
func TestAnswersAndEventsInEventOrder(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	stream := &client.EventStream{}
	m.connect()
	conn := m.order.conn
	m.daemonMsg(connectedMsg{stream: stream, list: &apitype.ServerList{EventSeq: 3}, conn: conn})
	event := func(ev apitype.Event) {
		if ev.Status != nil {
			ev.Status.EventSeq = ev.Seq // as the daemon sends it
		}
		m.daemonMsg(eventMsg{stream: stream, ev: ev})
	}
	status := func(state string, asOf int64) *apitype.ServerStatus {
		return &apitype.ServerStatus{Name: "down", State: state, EventSeq: asOf}
	}
	want := func(when, state string) {
		t.Helper()
		s, ok := m.server("down")
		switch {
		case state == "" && ok:
			t.Fatalf("%s: the server is shown (%s)", when, s.State)
		case state != "" && s.State != state:
			t.Fatalf("%s: %q is shown, want %q", when, s.State, state)
		}
	}

	// A save's answer read before the event that said the server failed,
	// arriving after it.
	event(apitype.Event{Seq: 5, Type: apitype.EventServer, Status: status(apitype.StateFailed, 0)})
	m.daemonMsg(doneMsg{what: "added down", server: status(apitype.StateStarting, 4), conn: conn})
	want("after the save's older answer", apitype.StateFailed)

	// A write's answer read after the "starting" event its write caused,
	// arriving before it: the event is older, although it comes last.
	m.daemonMsg(doneMsg{what: "restarted down", server: status(apitype.StateReady, 7), conn: conn})
	want("after the restart's answer", apitype.StateReady)
	event(apitype.Event{Seq: 6, Type: apitype.EventServer, Status: status(apitype.StateStarting, 0)})
	want("after an older event that came after the answer", apitype.StateReady)
	event(apitype.Event{Seq: 7, Type: apitype.EventServer, Status: status(apitype.StateReady, 0)})
	event(apitype.Event{Seq: 8, Type: apitype.EventServer, Status: status(apitype.StateBackoff, 0)})
	want("after a newer event", apitype.StateBackoff)
	m.daemonMsg(doneMsg{what: "restarted down", server: status(apitype.StateReady, 8), conn: conn})
	want("after an answer as of the event shown", apitype.StateReady)

	// Lists come back in any order: an older one after a newer one.
	m.daemonMsg(serversMsg{list: &apitype.ServerList{EventSeq: 9, Servers: []apitype.ServerStatus{*status(apitype.StateReady, 9)}}, conn: conn})
	m.daemonMsg(serversMsg{list: &apitype.ServerList{EventSeq: 8, Servers: []apitype.ServerStatus{*status(apitype.StateBackoff, 8)}}, conn: conn})
	want("after an older list came last", apitype.StateReady)

	// A list read before the server was removed, arriving after the
	// removal; then an event about it sent before the removal.
	event(apitype.Event{Seq: 10, Type: apitype.EventServerRemoved, Server: "down"})
	m.daemonMsg(serversMsg{list: &apitype.ServerList{EventSeq: 9, Servers: []apitype.ServerStatus{*status(apitype.StateReady, 9)}}, conn: conn})
	want("after a list older than the removal", "")

	// Added again, then removed by a delete whose answer comes before the
	// events that came before it.
	event(apitype.Event{Seq: 11, Type: apitype.EventServer, Status: status(apitype.StateStarting, 0)})
	want("added again", apitype.StateStarting)
	m.daemonMsg(doneMsg{what: "deleted down", removed: "down", removedAsOf: 13, conn: conn})
	event(apitype.Event{Seq: 12, Type: apitype.EventServer, Status: status(apitype.StateReady, 0)})
	want("after an event older than the delete's answer", "")

	// A list without the server, read after an event about it that
	// arrives late.
	event(apitype.Event{Seq: 14, Type: apitype.EventServer, Status: status(apitype.StateStarting, 0)})
	m.daemonMsg(serversMsg{list: &apitype.ServerList{EventSeq: 16}, conn: conn})
	want("after a list without it", "")
	event(apitype.Event{Seq: 15, Type: apitype.EventServer, Status: status(apitype.StateReady, 0)})
	want("after an event older than the list without it", "")
	event(apitype.Event{Seq: 17, Type: apitype.EventServer, Status: status(apitype.StateReady, 0)})
	want("after a newer event", apitype.StateReady)

	// A restarted daemon numbers its events from 1 again: its list is
	// shown as it is, and an answer from before the reconnect is not.
	m.connect()
	m.daemonMsg(connectedMsg{stream: stream, list: &apitype.ServerList{EventSeq: 1, Servers: []apitype.ServerStatus{*status(apitype.StateStarting, 1)}}, conn: m.order.conn})
	want("after reconnecting", apitype.StateStarting)
	m.daemonMsg(doneMsg{what: "restarted down", server: status(apitype.StateReady, 30), conn: conn})
	want("after an answer of the daemon before", apitype.StateStarting)
	event(apitype.Event{Seq: 2, Type: apitype.EventServer, Status: status(apitype.StateReady, 0)})
	want("after the new daemon's event", apitype.StateReady)
}

// TestToolNamesInEventOrder: each catalog event makes the model read the
// selected server's tool names again, and two reads may answer out of
// order; the names read as of the later event stay shown, whichever
// answer arrives last (order.go).
func TestToolNamesInEventOrder(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	m.connect()
	conn := m.order.conn
	ready := apitype.ServerStatus{Name: "local", State: apitype.StateReady, Tools: 1, EventSeq: 4}
	m.daemonMsg(connectedMsg{stream: &client.EventStream{}, list: &apitype.ServerList{EventSeq: 4, Servers: []apitype.ServerStatus{ready}}, conn: conn})
	want := func(when, line string) {
		t.Helper()
		if v := plain(m.frame()); !strings.Contains(v, line) {
			t.Fatalf("%s: the detail pane lacks %q:\n%s", when, line, v)
		}
	}

	// Read while the server was starting (no tools yet), answering after
	// the read made once its tools were in.
	m.daemonMsg(toolsMsg{server: "local", names: []string{"ping"}, conn: conn, asOf: 4})
	m.daemonMsg(toolsMsg{server: "local", names: nil, conn: conn, asOf: 2})
	want("after an older answer came last", "tools     ping")

	// Two reads as of the same event read the same catalog; a later one
	// replaces the names.
	m.daemonMsg(toolsMsg{server: "local", names: []string{"ping"}, conn: conn, asOf: 4})
	m.daemonMsg(toolsMsg{server: "local", names: []string{"echo", "ping"}, conn: conn, asOf: 6})
	want("after a newer answer", "tools     echo, ping")

	// A restarted daemon numbers its events from 1 again: an answer read
	// before the reconnect is not shown, the new daemon's is.
	m.connect()
	m.daemonMsg(connectedMsg{stream: &client.EventStream{}, list: &apitype.ServerList{EventSeq: 1, Servers: []apitype.ServerStatus{{Name: "local", State: apitype.StateReady, Tools: 1, EventSeq: 1}}}, conn: m.order.conn})
	m.daemonMsg(toolsMsg{server: "local", names: []string{"ping"}, conn: m.order.conn, asOf: 1})
	m.daemonMsg(toolsMsg{server: "local", names: []string{"old"}, conn: conn, asOf: 30})
	want("after an answer of the daemon before", "tools     ping")
}
