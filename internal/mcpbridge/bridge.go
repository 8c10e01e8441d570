// Package mcpbridge joins an MCP client on a byte stream (the stdin and
// stdout of `plexus mcp`) to the daemon's MCP face over streamable HTTP.
//
// It is a transport bridge, not a second MCP server: every message goes
// through unchanged, so the face alone decides what the client sees, and
// server→client requests (elicitation, sampling), progress, cancellation
// and list_changed notifications all cross it. Each client message is one
// POST — a request at once (a long call does not hold back the next), a
// notification in order before the next line is read; answers
// arriving as JSON or as an SSE stream are written out whole, one per
// line. After initialize it keeps the session id and protocol version the
// face gave, and holds a GET stream open for the face's own notifications.
package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/sse"
)

// maxLine bounds one message from the client; maxAnswer one from the face.
const (
	maxLine   = 8 << 20
	maxAnswer = 64 << 20
)

// Bridge runs until in ends or ctx is done.
type Bridge struct {
	HTTP *http.Client // reaches the face; no overall timeout
	URL  string
	// Warn reports problems that do not end the bridge; may be nil.
	Warn func(format string, args ...any)

	out   *bufio.Writer
	outMu sync.Mutex

	mu        sync.Mutex
	sessionID string
	version   string
	listening bool
	inflight  sync.WaitGroup
	// listenCtx ends the GET stream when the bridge ends.
	listenCtx    context.Context
	stopListen   context.CancelFunc
	listenerDone chan struct{}
}

// Run copies messages from in to the face and the face's messages to out.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.listenCtx, b.stopListen = context.WithCancel(ctx)
	b.listenerDone = make(chan struct{})
	b.out = newWriter(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		head, err := peek(msg)
		if err != nil {
			b.writeError(nil, -32700, "parse error: "+err.Error())
			continue
		}
		if head.ID == nil {
			// A notification (initialized, cancelled) or an answer to the
			// face's request: sent before the next line is read, so that
			// it reaches the face in order — initialized before the
			// requests that follow it. Requests go at once, each in its
			// own POST, so that a long call holds nothing back.
			b.post(ctx, msg, head)
			continue
		}
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			b.post(ctx, msg, head)
		}()
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("a message from the client is over %d MiB", maxLine>>20)
	}
	b.inflight.Wait()
	b.end()
	return err
}

func newWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }

// head is what the bridge reads of a message: little, so that large
// arguments are never decoded here.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]any `json:"_meta"`
		Name string         `json:"name"`
		URI  string         `json:"uri"`
	} `json:"params"`
}

func peek(msg []byte) (*head, error) {
	var h head
	if err := json.Unmarshal(msg, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

func (b *Bridge) post(ctx context.Context, msg []byte, h *head) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		b.writeError(h.ID, -32603, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	sid, version := b.sessionID, b.version
	b.mu.Unlock()
	if v, ok := h.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); ok && version == "" {
		version = v // an MCP 2026-07-28 client: no initialize, the version in each request
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if version >= "2026-07-28" && h.Method != "" {
		// MCP 2026-07-28 names the method (and what it acts on) in headers
		// too, so that proxies can route without reading the body.
		req.Header.Set("Mcp-Method", h.Method)
		switch h.Method {
		case "tools/call", "prompts/get":
			req.Header.Set("Mcp-Name", h.Params.Name)
		case "resources/read":
			req.Header.Set("Mcp-Name", h.Params.URI)
		}
	}
	resp, err := b.HTTP.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			b.writeError(h.ID, -32603, "plexus: the daemon did not answer: "+err.Error())
		}
		return
	}
	defer resp.Body.Close()
	if h.Method == "initialize" {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			b.mu.Lock()
			b.sessionID = id
			b.mu.Unlock()
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// a notification or a response to the face's request
	case ct == "text/event-stream":
		b.relayEvents(resp.Body, h.Method == "initialize")
	case ct == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		if err != nil {
			b.writeError(h.ID, -32603, "plexus: reading the answer: "+err.Error())
			return
		}
		b.deliver(body, h.Method == "initialize")
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if h.ID != nil {
			b.writeError(h.ID, -32600, fmt.Sprintf("plexus: %s: %s", resp.Status, strings.TrimSpace(string(body))))
		} else if b.Warn != nil {
			b.Warn("the face refused a notification: %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
	}
}

// relayEvents writes each SSE event's data as one message.
func (b *Bridge) relayEvents(r io.Reader, initialize bool) {
	events := sse.NewReader(r, maxAnswer)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, sse.ErrTooLarge) && b.Warn != nil {
				b.Warn("the face sent a message over %d MiB; the rest of that answer is lost", maxAnswer>>20)
			}
			return
		}
		b.deliver([]byte(ev.Data), initialize)
	}
}

// deliver writes one message to the client. The answer to initialize
// fixes the protocol version and opens the face's notification stream.
func (b *Bridge) deliver(msg []byte, initialize bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		// An event's data split over lines: stdio frames are one line.
		var c bytes.Buffer
		if json.Compact(&c, msg) != nil {
			if b.Warn != nil {
				b.Warn("the face sent a message that is not JSON; dropped")
			}
			return
		}
		msg = c.Bytes()
	}
	if initialize {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
			b.mu.Lock()
			b.version = r.Result.ProtocolVersion
			start := !b.listening && b.sessionID != ""
			b.listening = b.listening || start
			b.mu.Unlock()
			if start {
				go func() {
					defer close(b.listenerDone)
					b.listen()
				}()
			}
		}
	}
	b.outMu.Lock()
	defer b.outMu.Unlock()
	b.out.Write(msg)
	b.out.WriteByte('\n')
	b.out.Flush()
}

// listen holds the session's GET stream open for messages the face sends
// outside any request (list_changed), reconnecting after a break.
func (b *Bridge) listen() {
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		sid, version, on := b.sessionID, b.version, b.listening
		b.mu.Unlock()
		if !on {
			return
		}
		if b.listenCtx.Err() != nil {
			return
		}
		req, _ := http.NewRequestWithContext(b.listenCtx, http.MethodGet, b.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", version)
		resp, err := b.HTTP.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				attempt = 0
				b.relayEvents(resp.Body, false)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
				return // the session is gone, or the face offers no stream
			}
		}
		select {
		case <-b.listenCtx.Done():
			return
		case <-time.After(min(time.Duration(attempt+1)*200*time.Millisecond, 5*time.Second)):
		}
	}
}

// end closes the session with the face.
func (b *Bridge) end() {
	b.mu.Lock()
	sid := b.sessionID
	wasListening := b.listening
	b.listening = false
	b.mu.Unlock()
	b.stopListen()
	if wasListening {
		<-b.listenerDone
	}
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, b.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := b.HTTP.Do(req); err == nil {
		resp.Body.Close()
	}
}

// writeError answers a request the face could not.
func (b *Bridge) writeError(id json.RawMessage, code int, msg string) {
	if id == nil {
		if b.Warn != nil {
			b.Warn("%s", msg)
		}
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	b.deliver(out, false)
}
