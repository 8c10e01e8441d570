//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/recovery"
)

// hostileFrames are what a hostile or broken server sends its client
// mid-call: every request and notification a server may send, without
// params, with null params and with params of the wrong type. The SDK
// hands a message whose params it lets be missing to its handlers as a
// typed nil; a handler of Plexus's (or the SDK's own) that reads it
// panicked on the SDK's goroutine and ended the daemon.
var hostileFrames = func() []string {
	var frames []string
	for _, m := range []string{"notifications/resources/updated", "notifications/elicitation/complete",
		"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed",
		"notifications/progress", "notifications/message", "notifications/cancelled", "notifications/subscriptions/acknowledged"} {
		for _, params := range []string{``, `,"params":null`, `,"params":7`, `,"params":[{}]`, `,"params":{"_meta":"x","uri":1,"progressToken":{},"level":[]}`} {
			frames = append(frames, `{"jsonrpc":"2.0","method":"`+m+`"`+params+`}`)
		}
	}
	for i, m := range []string{"elicitation/create", "sampling/createMessage", "roots/list", "ping", "tools/list", "no/such"} {
		for j, params := range []string{``, `,"params":null`, `,"params":"x"`} {
			frames = append(frames, `{"jsonrpc":"2.0","id":"h`+string(rune('a'+i))+string(rune('0'+j))+`","method":"`+m+`"`+params+`}`)
		}
	}
	// Answers to requests never sent, and odd shapes.
	return append(frames, `{"jsonrpc":"2.0","id":987654,"result":null}`, `{"jsonrpc":"2.0","id":"x","error":7}`,
		`{"jsonrpc":"2.0"}`, `[]`, `null`, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"done"}}`)
}()

// TestHostileServerMessages: a server sends, mid-call, each of
// hostileFrames. The daemon must neither end nor log a bug of its own: the
// call is answered, and the connection serves the next.
func TestHostileServerMessages(t *testing.T) {
	var log logBuffer
	s := fakeSpec(t, "raw")
	s.Logger = log.logger()
	c := mustConnect(t, s)
	var done atomic.Bool
	c.WatchResources("test", func(uri string) { done.Store(done.Load() || uri == "done") })
	p := &askPeer{capsPeer: capsPeer{&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}, Sampling: &mcp.SamplingCapabilities{}}}}
	if _, err := c.CallTool(WithPeer(t.Context(), p, nil), "hostile", nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, done.Load) {
		t.Fatal("the last of the hostile frames was not seen in 30 s")
	}
	res, err := c.CallTool(t.Context(), "echo", []byte(`{"after":"hostile"}`))
	if err != nil || !strings.Contains(resultText(t, res), "hostile") {
		t.Fatalf("a call after the hostile frames: %v, %v", res, err)
	}
	if l := log.String(); strings.Contains(l, recovery.Bug) {
		t.Errorf("the hostile frames reached a bug: %s", l)
	}
}
