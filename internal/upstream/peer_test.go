//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type capsPeer struct{ caps *mcp.ClientCapabilities }

func (capsPeer) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
func (capsPeer) Progress(context.Context, *mcp.ProgressNotificationParams) {}
func (capsPeer) Log(context.Context, *mcp.LoggingMessageParams)            {}
func (p capsPeer) Capabilities() *mcp.ClientCapabilities                   { return p.caps }

// TestForwardedCaps: a server learns the caller's elicitation, sampling and
// roots — each only when the caller declared it: a caller without roots
// never has them declared for it (the SDK's struct would write them).
func TestForwardedCaps(t *testing.T) {
	pc := &peerCall{peer: capsPeer{&mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}},
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}},
		RootsV2:     &mcp.RootCapabilities{ListChanged: true},
	}}}
	b, _ := json.Marshal(forwardedCaps(pc))
	if got := string(b); !strings.Contains(got, `"roots":{"listChanged":true}`) || !strings.Contains(got, `"url":{}`) || !strings.Contains(got, `"tools":{}`) {
		t.Errorf("forwarded %s", got)
	}
	if b, _ := json.Marshal(forwardedCaps(&peerCall{peer: capsPeer{&mcp.ClientCapabilities{}}})); string(b) != "{}" {
		t.Errorf("a client with none: %s", b)
	}
}

// progressPeer counts the progress notifications it gets.
type progressPeer struct {
	capsPeer
	mu sync.Mutex
	n  int
}

func (p *progressPeer) Progress(context.Context, *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

// TestProgressBeforeAnswer: a stdio server writes a call's progress and
// its answer at once; every progress notification reaches the caller
// before the call returns (the answer, handed over in the read loop,
// could overtake the last progress routed by the SDK's reader, which then
// had no call to go to).
func TestProgressBeforeAnswer(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "raw"))
	for i := range 30 {
		p := &progressPeer{}
		ctx := WithPeer(context.Background(), p, "client-token")
		if _, err := c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"chatty"`)}); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		n := p.n
		p.mu.Unlock()
		if n != 3 {
			t.Fatalf("call %d: %d progress notifications before the answer, want 3", i, n)
		}
	}
}

// parkedPeer is a caller whose call may wait for its client's next round.
type parkedPeer struct {
	capsPeer
	parked bool
}

func (p *parkedPeer) Parked() bool { return p.parked }

// TestQuestionSkipsParkedCall: a server's question outside any call's
// context goes to the one client with a request in flight, not refused as
// ambiguous because of another client's call parked on an input_required
// answer (its client may never come back: the go-sdk's client cannot read
// a roots/list without params, and the call waited two minutes upstream,
// making every question of that server's other clients "calls from 2
// clients" meanwhile). Once that client is back with its answers, its call
// counts again.
func TestQuestionSkipsParkedCall(t *testing.T) {
	var f inflight
	waiting := &parkedPeer{parked: true}
	_, _, endParked := f.begin(WithPeer(t.Context(), waiting, nil))
	defer endParked()
	asking := &parkedPeer{}
	_, _, endLive := f.begin(WithPeer(t.Context(), asking, nil))
	defer endLive()
	got, _, err := f.route(context.Background(), "elicitation request", 0)
	if err != nil || got != asking {
		t.Fatalf("routed to %v, err %v; want the client with a request in flight", got, err)
	}
	waiting.parked = false
	if _, _, err := f.route(context.Background(), "elicitation request", 0); err == nil || !strings.Contains(err.Error(), "calls from 2 clients") {
		t.Errorf("with both clients' calls in flight: err %v, want refused as ambiguous", err)
	}
}

// detachedPeer is a caller whose call's connection may have dropped.
type detachedPeer struct {
	ownerPeer
	detached bool
}

func (p *detachedPeer) Detached() bool { return p.detached }

// TestLogSkipsDetachedCall: a log message of a stdio server, outside any
// call's context, goes to the one client whose call's connection is live,
// not dropped as ambiguous because another client's call is detached —
// its client dropped the POST (an mcp-go client's cancel) and the face
// holds the call a moment for a resumption. A detached call alone still
// gets it (its client may resume the stream and read it there).
func TestLogSkipsDetachedCall(t *testing.T) {
	c := &Conn{log: slog.New(slog.DiscardHandler)}
	r := &routeConn{c: c}
	gone := &detachedPeer{detached: true}
	_, _, endGone := c.calls.begin(WithPeer(t.Context(), gone, nil))
	defer endGone()
	msg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","logger":"peer","data":"hi"}`)}
	r.notify(t.Context(), msg)
	if len(gone.logs) != 1 {
		t.Fatalf("with the detached call alone in flight, it got %v; want the message", gone.logs)
	}
	live := &detachedPeer{}
	_, _, endLive := c.calls.begin(WithPeer(t.Context(), live, nil))
	defer endLive()
	r.notify(t.Context(), msg)
	if len(live.logs) != 1 || len(gone.logs) != 1 {
		t.Fatalf("the live call got %v, the detached one %v; want the message with the live call's client", live.logs, gone.logs)
	}
	gone.detached = false
	r.notify(t.Context(), msg)
	if len(live.logs) != 1 || len(gone.logs) != 1 {
		t.Errorf("with both clients' calls live: %v and %v; want it refused as ambiguous", live.logs, gone.logs)
	}
}

// TestAmbiguousLogsSaySo: log messages dropped because two clients' calls
// were in flight are said at Info level — at once, then once a minute at
// most with how many since — and a message with no call in flight is not.
func TestAmbiguousLogsSaySo(t *testing.T) {
	var out bytes.Buffer
	c := &Conn{log: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	r := &routeConn{c: c}
	msg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","logger":"peer","data":"hi"}`)}
	r.notify(t.Context(), msg) // no call in flight
	if out.Len() != 0 {
		t.Fatalf("a message with no call in flight was said at Info: %s", &out)
	}
	for range 2 {
		_, _, end := c.calls.begin(WithPeer(t.Context(), &detachedPeer{}, nil))
		defer end()
	}
	for range 3 {
		r.notify(t.Context(), msg)
	}
	if n := strings.Count(out.String(), "server log messages reached no client"); n != 1 || !strings.Contains(out.String(), "count=1 ") || !strings.Contains(out.String(), "calls from 2 clients") {
		t.Fatalf("after three ambiguous messages the log says (%d lines):\n%s", n, &out)
	}
	c.lostLogs.mu.Lock()
	c.lostLogs.last = time.Now().Add(-2 * logDropEvery)
	c.lostLogs.mu.Unlock()
	r.notify(t.Context(), msg)
	if n := strings.Count(out.String(), "server log messages reached no client"); n != 2 || !strings.Contains(out.String(), "count=3 ") {
		t.Fatalf("a minute later the log says (%d lines):\n%s", n, &out)
	}
}

// TestLogAfterItsCallsAnswer: a log message a server writes after its
// call's answer (mcp-go's stdio and SSE servers queue them), with no call
// in flight, reaches the client of the call that just ended on its
// session's own stream, as it would directly — it was dropped, the
// client's last messages lost; one long after any call reaches no one.
func TestLogAfterItsCallsAnswer(t *testing.T) {
	c := &Conn{log: slog.New(slog.DiscardHandler)}
	r := &routeConn{c: c}
	aside := &ownerPeer{}
	client := &ownerPeer{aside: aside}
	_, _, end := c.calls.begin(WithPeer(t.Context(), client, nil))
	end()
	msg := &jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"error","logger":"peer","data":"late"}`)}
	r.notify(t.Context(), msg)
	if len(aside.logs) != 1 || aside.logs[0] != "error" || len(client.logs) != 0 {
		t.Fatalf("on the standalone stream %v, on the call's %v; want the late message on the standalone stream", aside.logs, client.logs)
	}
	c.calls.mu.Lock()
	c.calls.lastEnded = time.Now().Add(-2 * lateGrace)
	c.calls.mu.Unlock()
	r.notify(t.Context(), msg)
	if len(aside.logs) != 1 {
		t.Errorf("a message long after any call reached %v", aside.logs)
	}
}

// TestHeardSinceCountsClientSessions: a server answering on its clients'
// own sessions is heard, though its shared connection, where its health
// check goes, carried nothing else meanwhile.
func TestHeardSinceCountsClientSessions(t *testing.T) {
	ready, opening := make(chan struct{}), make(chan struct{})
	close(ready)
	own := &Conn{}
	shared := &Conn{clients: &clientSessions{byKey: map[any]*clientSession{
		"a": {ready: ready, conn: own},
		"b": {ready: opening},
	}}}
	before := time.Now()
	if shared.HeardSince(before) {
		t.Fatal("heard with nothing sent")
	}
	own.heard.Store(time.Now().Add(time.Millisecond).UnixNano())
	if !shared.HeardSince(before) {
		t.Error("a client's session carried an answer, and the server was not heard")
	}
}
