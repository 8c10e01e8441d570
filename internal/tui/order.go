package tui

import (
	"slices"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// Answers (a list, a write's result) and events come on two connections,
// and either may arrive first: the "starting" event sent before a save's
// answer was read can arrive after its "ready". The daemon numbers its
// events (apitype.Event.Seq) and says of every status which events it is
// as new as (apitype.ServerStatus.EventSeq), so the model shows the newer
// of two by their numbers, never by the order they arrive in:
//
//   - an event is newer than what is known of its server unless that was
//     read as of it or later (its number is not above the known one);
//   - an answer as of event N includes every event up to N: it is newer
//     unless what is known came from a later event or answer.
//
// What is known of a server is its shown status, or else the number as of
// which it was seen gone: its removal's event, or a list without it.
//
// A server's tool names for the detail pane are read when an event says
// the catalog changed, and two reads may answer out of order too: the one
// read as of the higher number is shown (showTools).
type order struct {
	// conn numbers the connections to the daemon (connect): a restarted
	// daemon numbers its events from 1 again, so an answer read on an
	// earlier connection is not compared with them.
	conn uint64
	// listed is the number as of which the newest list shown was read: a
	// server it did not have, and nothing since announced, is gone.
	listed int64
	// gone keeps, for each server removed since, the number as of which
	// it was seen gone.
	gone map[string]int64
	// tools keeps, for each server, the number as of which its tool names
	// shown were read.
	tools map[string]int64
}

// older says whether s, from an event or an answer, is older than what is
// known of its server, as of known.
func older(seq int64, fromEvent bool, known int64) bool {
	if fromEvent {
		return seq <= known
	}
	return seq < known
}

// goneAsOf is the number as of which the model knows server name is gone.
func (o *order) goneAsOf(name string) int64 {
	return max(o.listed, o.gone[name])
}

// showStatus shows s, unless what is known of its server is newer.
func (m *Model) showStatus(s apitype.ServerStatus, fromEvent bool) {
	i := m.index(s.Name)
	if i < 0 {
		if older(s.EventSeq, fromEvent, m.order.goneAsOf(s.Name)) {
			return
		}
		m.setServers(append(slices.Clone(m.servers), s))
		return
	}
	if older(s.EventSeq, fromEvent, m.servers[i].EventSeq) {
		return
	}
	if s.Stderr == nil {
		s.Stderr = m.servers[i].Stderr // events carry no stderr lines
	}
	m.servers[i] = s
}

// removed takes server name off the list, seen gone as of seq, unless its
// shown status is newer.
func (m *Model) removed(name string, seq int64, fromEvent bool) {
	if i := m.index(name); i >= 0 && older(seq, fromEvent, m.servers[i].EventSeq) {
		return
	}
	if m.order.gone == nil {
		m.order.gone = map[string]int64{}
	}
	m.order.gone[name] = max(m.order.gone[name], seq)
	m.remove(name)
}

// showList shows a list read on connection conn: each of its statuses
// that is newer than what is known, and without the servers it does not
// have that were known as of it or earlier.
func (m *Model) showList(conn uint64, list *apitype.ServerList) {
	if conn != m.order.conn {
		return
	}
	for _, s := range list.Servers {
		m.showStatus(s, false)
	}
	for _, s := range slices.Clone(m.servers) {
		if !slices.ContainsFunc(list.Servers, func(l apitype.ServerStatus) bool { return l.Name == s.Name }) {
			m.removed(s.Name, list.EventSeq, false)
		}
	}
	m.order.listed = max(m.order.listed, list.EventSeq)
}

// connectedList shows the list read on a new connection as it is: what
// was known came from the daemon before, whose numbers mean nothing now.
func (m *Model) connectedList(conn uint64, list *apitype.ServerList) {
	m.order = order{conn: conn, listed: list.EventSeq}
	m.setServers(list.Servers)
}

// showTools shows a server's tool names read on connection msg.conn,
// unless names read as of a later event are shown already.
func (m *Model) showTools(msg toolsMsg) {
	if msg.conn != m.order.conn || msg.asOf < m.order.tools[msg.server] {
		return
	}
	if m.order.tools == nil {
		m.order.tools = map[string]int64{}
	}
	m.order.tools[msg.server] = msg.asOf
	m.tools[msg.server] = msg.names
}
