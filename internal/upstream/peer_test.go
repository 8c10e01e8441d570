//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
