package tui

import (
	"context"
	"errors"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// Every exchange with the daemon is a tea.Cmd: it runs off the UI's
// goroutine and comes back as one of these messages. None of them carries
// a secret: the daemon never sends stored values back.

// connectedMsg is the event stream opened, then the servers read: events
// after the snapshot are not missed.
type connectedMsg struct {
	stream *client.EventStream
	list   *apitype.ServerList
	conn   uint64 // the connection's number (order.conn)
	err    error
}

// eventMsg is one event of the stream, or the error that ended it.
type eventMsg struct {
	stream *client.EventStream
	ev     apitype.Event
	err    error
}

// reconnectMsg asks to open the event stream again.
type reconnectMsg struct{}

// serversMsg is a fresh list of the servers (after a catalog change).
type serversMsg struct {
	list *apitype.ServerList
	conn uint64 // the connection it was read on (order.conn)
	err  error
}

// toolsMsg is one server's tool names, for the detail pane, read on
// connection conn as of event asOf (order.go).
type toolsMsg struct {
	server string
	names  []string
	conn   uint64
	asOf   int64
}

// doneMsg ends a write: what was done, and the server's state after it.
type doneMsg struct {
	what   string // "added example", "switched example off"
	server *apitype.ServerStatus
	err    error
	// fromForm: the error belongs in the form, which stays open.
	fromForm bool
	// removed names a server deleted, removedAsOf the number of the
	// newest event the deletion's answer is as new as (order.go).
	removed     string
	removedAsOf int64
	// conn is the connection the write was made on (order.conn).
	conn uint64
}

// editMsg is a server's stored settings, read to open the form on them.
type editMsg struct {
	name string
	sc   *apitype.ServerConfig
	err  error
}

// loginMsg is the start of an OAuth login.
type loginMsg struct {
	server string
	start  *apitype.LoginStart
	err    error
}

// reconnectDelay is how long to wait before opening a lost stream again.
const reconnectDelay = 2 * time.Second

func (m *Model) connect() tea.Cmd {
	c, ctx := m.c, m.ctx
	m.order.conn++
	conn := m.order.conn
	return func() tea.Msg {
		stream, err := c.Events(ctx)
		if err != nil {
			return connectedMsg{err: err}
		}
		list, err := c.Servers(ctx)
		if err != nil {
			stream.Close()
			return connectedMsg{err: err}
		}
		return connectedMsg{stream: stream, list: list, conn: conn}
	}
}

func nextEvent(s *client.EventStream) tea.Cmd {
	return func() tea.Msg {
		ev, err := s.Next()
		return eventMsg{stream: s, ev: ev, err: err}
	}
}

func reconnectLater() tea.Cmd {
	return tea.Tick(reconnectDelay, func(time.Time) tea.Msg { return reconnectMsg{} })
}

func (m *Model) refresh() tea.Cmd {
	c, ctx, conn := m.c, m.ctx, m.order.conn
	return func() tea.Msg {
		list, err := c.Servers(ctx)
		return serversMsg{list: list, conn: conn, err: err}
	}
}

func (m *Model) fetchTools(server string) tea.Cmd {
	c, ctx, conn := m.c, m.ctx, m.order.conn
	return func() tea.Msg {
		tl, err := c.Tools(ctx, server)
		if err != nil {
			return nil // the detail pane just shows no tool names
		}
		var names []string
		for _, t := range tl.Tools {
			if t.Server == server && t.Kind == apitype.KindTool {
				names = append(names, t.Tool)
			}
		}
		slices.Sort(names)
		return toolsMsg{server: server, names: names, conn: conn, asOf: tl.EventSeq}
	}
}

// write runs one write and reports it as a doneMsg.
func (m *Model) write(what string, f func(context.Context) (*apitype.WriteResult, error)) tea.Cmd {
	ctx, conn := m.ctx, m.order.conn
	return func() tea.Msg {
		wr, err := f(ctx)
		d := doneMsg{what: what, err: err, conn: conn}
		if wr != nil {
			d.server = wr.Server
		}
		return d
	}
}

// save sends the form's plan: add or replace, then forget the form's own
// secrets whose references the save removed.
func (m *Model) save(p plan, editing string, revision int64) tea.Cmd {
	c, ctx, conn := m.c, m.ctx, m.order.conn
	return func() tea.Msg {
		var (
			wr  *apitype.WriteResult
			err error
		)
		what := "added " + p.req.Name
		if editing != "" {
			what = "saved " + editing
			wr, err = c.PutServer(ctx, editing, p.req, revision)
		} else {
			wr, err = c.AddServer(ctx, p.req, 0)
		}
		if err != nil {
			if isStale(err) {
				err = errors.New("the settings changed while the form was open (another edit, the web page): press esc and open the form again")
			}
			return doneMsg{what: what, err: err, fromForm: true}
		}
		for _, v := range p.forget {
			var ae *client.APIError
			if err := c.DeleteSecret(ctx, v); err != nil && !(errors.As(err, &ae) && ae.Body.Code == apitype.CodeNotFound) {
				return doneMsg{what: what, server: wr.Server, conn: conn, err: errors.New(what + ", but its secret " + v + " was not removed: " + err.Error())}
			}
		}
		return doneMsg{what: what, server: wr.Server, conn: conn}
	}
}

func isStale(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Body.Code == apitype.CodeStale
}

func (m *Model) openEdit(name string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		sc, err := c.Server(ctx, name)
		return editMsg{name: name, sc: sc, err: err}
	}
}

func (m *Model) startLogin(name string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		st, err := c.Login(ctx, name, apitype.LoginRequest{})
		return loginMsg{server: name, start: st, err: err}
	}
}

// review accepts the held tools shown, by the hashes shown, or approves the
// definition shown: a change made after it was shown is refused.
func (m *Model) review(s apitype.ServerStatus) tea.Cmd {
	c := m.c
	if s.NeedsApproval {
		key := ""
		if s.Approval != nil {
			key = s.Approval.Key
		}
		return m.write("approved "+s.Name, func(ctx context.Context) (*apitype.WriteResult, error) {
			return c.Approve(ctx, s.Name, key)
		})
	}
	req := apitype.AcceptRequest{Hashes: map[string]string{}}
	for _, h := range s.Held {
		req.Tools = append(req.Tools, h.Tool)
		req.Hashes[h.Tool] = h.NewHash
	}
	return m.write("accepted "+plural(len(req.Tools), "tool")+" of "+s.Name, func(ctx context.Context) (*apitype.WriteResult, error) {
		ar, err := c.Accept(ctx, s.Name, req)
		if err != nil {
			return nil, err
		}
		return &apitype.WriteResult{Server: ar.Server}, nil
	})
}

// decodeStored decodes a server's stored settings for the form.
func decodeStored(sc *apitype.ServerConfig) (map[string]any, error) {
	return serverconf.Decode(sc.Config)
}
