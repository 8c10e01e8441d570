package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
	"github.com/plexus-mcp/plexus/internal/rawhttp"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// An editor starts `plexus mcp` once and keeps it for as long as it runs.
// The daemon behind it may go away meanwhile — restarted for an upgrade,
// crashed, stopped — and the session the bridge held with its face goes
// with it: the face answers 404 for a session it does not know. Rather
// than fail every later request until the editor is restarted, the bridge
// brings the face back if it can (Reconnect: `plexus mcp` starts the
// daemon again) and opens a session again as the client opened its own:
// the client's initialize and initialized, then its logging level and its
// resource subscriptions, answered to the bridge, not to the client. The
// request that met the 404 goes again on the new session: a 404 says the
// face did not take it. The client is then told that the lists changed,
// since the daemon that answers may offer other tools. A request that was
// sent and got no answer is not sent again: the server may have acted on
// it.

// replay is what reopening a session sends again, as the client sent it.
type replay struct {
	initialize  []byte            // the client's initialize
	initialized []byte            // its notifications/initialized
	logLevel    []byte            // its last logging/setLevel
	subscribed  map[string][]byte // its resources/subscribe, by URI
}

// remember keeps what a reopened session needs of a client message.
func (b *Bridge) remember(msg []byte, h *head) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch h.Method {
	case "initialize":
		b.replay = replay{initialize: msg}
	case "notifications/initialized":
		b.replay.initialized = msg
	case "logging/setLevel":
		b.replay.logLevel = msg
	case "resources/subscribe":
		if b.replay.subscribed == nil {
			b.replay.subscribed = map[string][]byte{}
		}
		b.replay.subscribed[h.Name] = msg
	case "resources/unsubscribe":
		delete(b.replay.subscribed, h.Name)
	}
}

// unreached reports whether err says the request never reached the face:
// nothing answered where the daemon listens.
func unreached(err error) bool {
	var de *rawhttp.DialError
	var oe *net.OpError
	return errors.As(err, &de) || errors.As(err, &oe) && oe.Op == "dial"
}

// reconnect brings the face back after a request could not reach it, once
// at a time.
func (b *Bridge) reconnect(ctx context.Context) error {
	if b.Reconnect == nil {
		return errors.New("no daemon answers")
	}
	b.reconnectMu.Lock()
	defer b.reconnectMu.Unlock()
	return b.Reconnect(ctx)
}

// reopen opens a session again in place of lost, which the face no
// longer knows, unless another request did already.
func (b *Bridge) reopen(ctx context.Context, lost string) error {
	b.reopenMu.Lock()
	defer b.reopenMu.Unlock()
	b.mu.Lock()
	current, r := b.sessionID, b.replay
	subscribed := make([][]byte, 0, len(r.subscribed))
	for _, m := range r.subscribed {
		subscribed = append(subscribed, m)
	}
	b.mu.Unlock()
	if current != lost {
		return nil // reopened meanwhile
	}
	if r.initialize == nil {
		return errors.New("the session was not opened by an initialize of the client's")
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	resp, err := b.do(ctx, hdr, b.ownID(r.initialize))
	if err != nil {
		return fmt.Errorf("initializing again: %w", err)
	}
	answer, err := readAnswer(resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if err != nil || sid == "" {
		return fmt.Errorf("initializing again: %v (HTTP %s, session %q)", err, resp.Status, sid)
	}
	var init struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Tools     *struct{ ListChanged bool } `json:"tools"`
				Resources *struct{ ListChanged bool } `json:"resources"`
				Prompts   *struct{ ListChanged bool } `json:"prompts"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &init) != nil || init.Result == nil {
		return fmt.Errorf("initializing again: the face answered %s", answer)
	}
	hdr = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {init.Result.ProtocolVersion}}
	again := [][]byte{r.initialized}
	if r.logLevel != nil {
		again = append(again, b.ownID(r.logLevel))
	}
	for _, m := range subscribed {
		again = append(again, b.ownID(m))
	}
	for _, m := range again {
		if m == nil {
			continue
		}
		resp, err := b.do(ctx, hdr, m)
		if err != nil {
			return fmt.Errorf("opening the session again: %w", err)
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
	}
	b.mu.Lock()
	b.sessionID, b.version = sid, init.Result.ProtocolVersion
	b.mu.Unlock()
	if b.Warn != nil {
		b.Warn("the daemon's face had lost this client's session (the daemon restarted?): opened it again")
	}
	b.startListening()
	c := init.Result.Capabilities
	for _, n := range []struct {
		on     bool
		method string
	}{{c.Tools != nil && c.Tools.ListChanged, "notifications/tools/list_changed"},
		{c.Resources != nil && c.Resources.ListChanged, "notifications/resources/list_changed"},
		{c.Prompts != nil && c.Prompts.ListChanged, "notifications/prompts/list_changed"}} {
		if n.on {
			b.deliver([]byte(`{"jsonrpc":"2.0","method":"`+n.method+`"}`), false)
		}
	}
	return nil
}

// ownID returns a copy of request msg under an id of the bridge's, so
// that its answer is the bridge's and never reaches the client.
func (b *Bridge) ownID(msg []byte) []byte {
	out := []byte(`{"id":"plexus-bridge-` + strconv.FormatInt(b.ownIDs.Add(1), 10) + `"`)
	jsonscan.Members(msg, func(k, v []byte) bool {
		if string(k) != "id" {
			out = append(out, `,"`...)
			out = append(out, k...)
			out = append(out, `":`...)
			out = append(out, v...)
		}
		return true
	})
	return append(out, '}')
}

// readAnswer reads the JSON-RPC answer of a request from resp, as JSON or
// as the last message with an id of an event stream, and closes it.
func readAnswer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		return io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	}
	events := sse.NewReader(resp.Body, maxAnswer)
	var answer []byte
	for {
		ev, err := events.Next()
		if err != nil {
			if answer == nil {
				return nil, fmt.Errorf("the event stream ended without an answer: %w", err)
			}
			return answer, nil
		}
		if data := bytes.TrimSpace([]byte(ev.Data)); bytes.Contains(data, []byte(`"id"`)) {
			answer = data
		}
	}
}
