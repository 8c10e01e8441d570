package e2e

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dropper is an HTTP transport whose connections a test can cut, as when
// an editor quits mid-call.
type dropper struct {
	token string
	mu    sync.Mutex
	conns []net.Conn
	base  *http.Transport
}

func newDropper(token string) *dropper {
	d := &dropper{token: token}
	d.base = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			d.mu.Lock()
			d.conns = append(d.conns, c)
			d.mu.Unlock()
		}
		return c, err
	}}
	return d
}

func (d *dropper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+d.token)
	return d.base.RoundTrip(r)
}

func (d *dropper) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
}

// TestDisconnectedClientFreesServer: a client that goes away while a
// session-era server's elicitation waits for it has its call cancelled
// upstream at once, so that another client's elicitation on the same
// server works within a second — on the SDK's path (a call that asks for
// progress) and forwarded as a frame.
func TestDisconnectedClientFreesServer(t *testing.T) {
	// Not parallel: its other client must be answered within 1 s.
	e, base, token := faceEnv(t, "")
	addOldServer(t, e)
	all := tools(t, e)
	ask, echo := toolNamed(t, all, "old", "ask").Name, toolNamed(t, all, "old", "echo").Name
	for _, warm := range []bool{false, true} {
		name := map[bool]string{false: "SDK path", true: "frame"}[warm]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			asked := make(chan struct{}, 1)
			d := newDropper(token)
			a, err := mcp.NewClient(&mcp.Implementation{Name: "gone", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- struct{}{}
					<-ctx.Done() // never answers: the editor quits
					return nil, ctx.Err()
				}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: d}},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			// Not closed: the client is gone (its connections cut), and a
			// graceful close would wait for the call it abandoned.
			if warm {
				textOf(t)(a.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "x"}}))
			}
			params := &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "stay?"}}
			if !warm {
				params.SetProgressToken("p") // the frame path leaves it to the SDK
			}
			go a.CallTool(ctx, params)
			select {
			case <-asked:
			case <-ctx.Done():
				t.Fatal("the first client was never asked")
			}
			d.drop()

			b, err := mcp.NewClient(&mcp.Implementation{Name: "stays", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
				}}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if warm {
				textOf(t)(b.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "x"}}))
			}
			start := time.Now()
			bctx, bcancel := context.WithTimeout(ctx, 10*time.Second)
			defer bcancel()
			res, err := b.CallTool(bctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "ok?"}})
			if err != nil {
				t.Fatalf("the other client's ask: %v\n%s", err, e.DaemonOutput())
			}
			took := time.Since(start)
			if got := textOfResult(t, res, err); got != "answer: yes" {
				t.Errorf("the other client's ask: %q (after %s)", got, took)
			}
			if took > time.Second {
				t.Errorf("the other client's ask took %s, want under 1 s", took)
			}
		})
	}
}
