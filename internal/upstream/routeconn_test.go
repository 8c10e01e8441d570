package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askPeer records what it is asked and answers with a fixed result.
type askPeer struct {
	capsPeer
	mu     sync.Mutex
	method string
	params string
}

func (p *askPeer) Ask(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.method, p.params = method, string(params)
	return json.RawMessage(`{"action":"accept","content":{"ok":true},"x-client":"kept"}`), nil
}

// TestServerRequestPassesWhole: a server's request mid-call reaches the
// caller with its params exactly as the server wrote them — no field
// added (a re-encoded elicitation gained "mode":"", which the TypeScript
// SDK's client refuses), none dropped — and the caller's answer reaches
// the server exactly as the caller wrote it.
func TestServerRequestPassesWhole(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "raw"))
	p := &askPeer{capsPeer: capsPeer{&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}}
	res, err := c.CallTool(WithPeer(t.Context(), p, nil), "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	var frame struct {
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal([]byte(askFrame), &frame)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.method != "elicitation/create" || p.params != string(frame.Params) {
		t.Errorf("asked %s %s, want the server's params as written: %s", p.method, p.params, frame.Params)
	}
	got := resultText(t, res)
	if !strings.Contains(got, `"result":{"action":"accept","content":{"ok":true},"x-client":"kept"}`) || !strings.Contains(got, `"id":"srv-1"`) {
		t.Errorf("the server got %s", got)
	}
}
