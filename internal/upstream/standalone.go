package upstream

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// The standalone stream of a session-era streamable HTTP server: a GET to
// the endpoint that the server answers with an event stream, on which it
// sends what no request of the client's carries, such as an elicitation
// it makes in the background of a call.
//
// The SDK's client opens it itself, but only once told that the session is
// initialized, through a method of its own connection that is unexported:
// past Plexus's routing wrapper (routeconn.go) it is never told. So Plexus
// opens the stream, as the transport specification says: Accept
// text/event-stream, the session id and protocol version headers; 405 (or
// another 4xx, or an answer that is no event stream) means the server
// offers none; a stream that ends is resumed with Last-Event-ID after the
// server's retry delay. MCP 2026-07-28 has no standalone stream.

// standaloneMaxEvent bounds one event, as the SDK bounds its own.
const standaloneMaxEvent = 16 << 20

// standaloneRetries is how many reconnects in a row that fail or bring
// nothing new end the stream.
const standaloneRetries = 5

func (c *Conn) listenStandalone(life context.Context, hc *http.Client, url string) {
	defer c.watchers.Done()
	// The stream ends with the Conn, before its teardown waits for it.
	life, cancel := context.WithCancel(life)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-life.Done():
		}
	}()
	lastID, delay, failures := "", time.Second, 0
	for life.Err() == nil {
		resp, err := c.getStandalone(life, hc, url, lastID)
		switch {
		case err != nil:
			failures++
		case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode >= 300 || !isEventStream(resp):
			resp.Body.Close()
			c.log.Debug("server offers no standalone event stream", "status", resp.StatusCode)
			return
		default:
			// A stream that brings nothing new counts as a failure, so
			// that a server ending every stream at once is not asked
			// again for ever.
			failures++
			err = c.readStandalone(life, resp, &lastID, &delay, &failures)
			resp.Body.Close()
		}
		if failures > standaloneRetries {
			c.log.Warn("standalone event stream lost", "err", c.redact.Error(err))
			return
		}
		select {
		case <-life.Done():
		case <-time.After(delay):
		}
	}
}

// readStandalone reads one standalone stream until it ends, noting the
// last event id to resume after and the server's retry delay; failures
// is set to 0 once the stream brings something new. Its error is nil at a
// clean end.
func (c *Conn) readStandalone(ctx context.Context, resp *http.Response, lastID *string, delay *time.Duration, failures *int) error {
	events := sse.NewReader(resp.Body, standaloneMaxEvent)
	for {
		ev, err := events.NextAny()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if (ev.ID != "" && ev.ID != *lastID) || ev.Data != "" {
			*failures = 0
		}
		if ev.ID != "" {
			*lastID = ev.ID
		}
		if d, ok := ev.RetryDelay(); ok && d > 0 {
			*delay = d
		}
		if ev.Data != "" && ev.Type == "message" {
			c.standaloneMessage(ctx, []byte(ev.Data))
		}
	}
}

func (c *Conn) getStandalone(ctx context.Context, hc *http.Client, url, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", c.ProtocolVersion())
	if id := c.raw.SessionID(); id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return hc.Do(req)
}

func isEventStream(resp *http.Response) bool {
	t, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return t == "text/event-stream"
}

// standaloneMessage handles one message from the standalone stream as the
// routed connection and the SDK's client handle those of the other streams.
func (c *Conn) standaloneMessage(ctx context.Context, data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		c.log.Warn("server sent a malformed message on its standalone stream", "err", err)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		c.log.Debug("server sent an answer on its standalone stream")
		return
	}
	if c.route.handle(context.WithValue(ctx, standaloneKey{}, true), req) {
		return
	}
	switch req.Method {
	case "ping":
		if req.IsCall() {
			c.route.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage("{}")})
		}
	case "notifications/tools/list_changed":
		c.notify.post("tools")
	case "notifications/resources/list_changed":
		c.notify.post("resources")
	case "notifications/prompts/list_changed":
		c.notify.post("prompts")
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(req.Params, &p) == nil {
			c.resourceUpdated(p.URI)
		}
	default:
		if req.IsCall() {
			c.route.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "plexus: method not handled: " + clip(req.Method, 100)}})
		}
	}
}

// standaloneKey marks the context of a message the standalone stream
// carried.
type standaloneKey struct{}
