package face

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawSession is a session of the profile's SDK server whose messages the
// test writes and reads as JSON-RPC, unmediated by an SDK client.
type rawSession struct {
	t      *testing.T
	conn   mcp.Connection
	frames chan jsonrpc.Message
}

func newRawSession(t *testing.T, srv *mcp.Server) *rawSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &rawSession{t: t, conn: conn, frames: make(chan jsonrpc.Message, 64)}
	go func() {
		defer close(s.frames)
		for {
			m, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			s.frames <- m
		}
	}()
	return s
}

func (s *rawSession) send(text string) {
	s.t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(text))
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.conn.Write(s.t.Context(), m); err != nil {
		s.t.Fatal(err)
	}
}

// until reads the session's frames up to the first that done accepts and
// returns the methods of the notifications before it.
func (s *rawSession) until(what string, done func(jsonrpc.Message) bool) (notified []string) {
	s.t.Helper()
	deadline := time.After(20 * time.Second) // a ceiling, not a wait: each frame ends it sooner
	for {
		select {
		case m, ok := <-s.frames:
			if !ok {
				s.t.Fatalf("the session ended before %s", what)
			}
			if done(m) {
				return notified
			}
			if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() {
				notified = append(notified, r.Method)
			}
		case <-deadline:
			s.t.Fatalf("no %s in 20 s; notified before: %v", what, notified)
		}
	}
}

func isMethod(method string) func(jsonrpc.Message) bool {
	return func(m jsonrpc.Message) bool {
		r, ok := m.(*jsonrpc.Request)
		return ok && r.Method == method
	}
}

func isAnswer(m jsonrpc.Message) bool {
	_, ok := m.(*jsonrpc.Response)
	return ok
}

// TestListenGetsOnlyWhatItAsked: a subscriptions/listen stream filtered to
// prompts gets the prompts' list_changed and never the tools'. The SDK's
// stateless handler binds a 2026-07-28 request's session before it reads
// the request, and a change in between went to that session unasked (the
// profile's list changes a while after its server's, so the change the
// client caused on one stream can land in the opening of its next). The
// test holds a session at that moment, changes the tools, then sends the
// prompts-only listen and changes the prompts. A session-era session bound
// after it is told of the tools' change after it (the SDK tells them in
// turn), so what the first was sent is in its frames by then.
func TestListenGetsOnlyWhatItAsked(t *testing.T) {
	p, _ := testProfile(t, 0, 10)
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	tool := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	p.srv.AddPrompt(&mcp.Prompt{Name: "first"}, prompt) // the profile offers prompts, and their changes

	opening := newRawSession(t, p.srv) // a 2026-07-28 request's session, its request not read yet
	witness := newRawSession(t, p.srv)
	witness.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"witness","version":"1"}}}`)
	witness.until("the answer to initialize", isAnswer)
	witness.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)

	p.srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, tool)
	witness.until("the tools' list_changed", isMethod("notifications/tools/list_changed"))

	opening.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + listMeta + `,"notifications":{"promptsListChanged":true}}}`)
	got := opening.until("the listen's acknowledgement", isMethod("notifications/subscriptions/acknowledged"))
	p.srv.AddPrompt(&mcp.Prompt{Name: "second"}, prompt)
	got = append(got, opening.until("the prompts' list_changed", isMethod("notifications/prompts/list_changed"))...)
	for _, m := range got {
		if m != "notifications/prompts/list_changed" {
			t.Errorf("a listen stream filtered to prompts got %s (all: %v)", m, got)
		}
	}
}

// TestChangeNoticeNeedsAListen: the SDK picks the sessions it tells of a
// change before it tells them, so a 2026-07-28 session it picked while it
// had no InitializeParams (as a session of the session era) may have them
// when the notice is sent. Such a notice, unmarked by a listen stream's
// subscription id, is dropped; one a listen asked for, and any to a
// session-era session, is sent.
func TestChangeNoticeNeedsAListen(t *testing.T) {
	p, _ := testProfile(t, 0, 10)
	modern := newRawSession(t, p.srv)
	modern.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + listMeta + `,"notifications":{"promptsListChanged":true}}}`)
	modern.until("the listen's acknowledgement", isMethod("notifications/subscriptions/acknowledged"))
	old := newRawSession(t, p.srv)
	old.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	old.until("the answer to initialize", isAnswer)
	sessions := map[string]*mcp.ServerSession{}
	for ss := range p.srv.Sessions() {
		if ip := ss.InitializeParams(); ip != nil {
			sessions[ip.ProtocolVersion] = ss
		}
	}
	if sessions["2026-07-28"] == nil || sessions["2025-11-25"] == nil {
		t.Fatalf("sessions by version: %v", sessions)
	}
	for _, tc := range []struct {
		version string
		meta    mcp.Meta
		sent    bool
	}{
		{"2026-07-28", nil, false},
		{"2026-07-28", mcp.Meta{mcp.MetaKeySubscriptionID: 7}, true},
		{"2025-11-25", nil, true},
	} {
		sent := false
		h := askedOnly(func(context.Context, string, mcp.Request) (mcp.Result, error) { sent = true; return nil, nil })
		req := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: sessions[tc.version], Params: &mcp.ToolListChangedParams{Meta: tc.meta}}
		h(context.Background(), "notifications/tools/list_changed", req)
		if sent != tc.sent {
			t.Errorf("%s session, _meta %v: sent %v", tc.version, tc.meta, sent)
		}
	}
}
