package face

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/era"
)

// A bare profile of one server is that server, as far as its clients can
// tell: it declares the server's capabilities as the server wrote them in
// its handshake (host.Offer), not the SDK's reading of what the profile
// registered — which declared what the server lacked (completions,
// logging) and left out what it had until a first item of it came (issue
// 43, point 11).

// serverCaps is a bare profile's receiving middleware: its answer to
// initialize and server/discover carries the server's capabilities.
func (p *profile) serverCaps(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || (method != "initialize" && method != "server/discover") {
			return res, err
		}
		o, oerr := p.f.h.Offer(p.def.servers[0])
		if oerr != nil || len(o.Capabilities) == 0 {
			return res, err
		}
		return capsAnswer{Result: res, caps: o.Capabilities, discover: method == "server/discover"}, nil
	}
}

// capsAnswer is a handshake's answer with the capabilities caps.
type capsAnswer struct {
	mcp.Result
	caps     json.RawMessage
	discover bool // a stateless era's answer, which says it is complete
}

func (a capsAnswer) MarshalJSON() ([]byte, error) {
	b, err := marshalSDK(a.Result)
	if err != nil {
		return nil, err
	}
	if b, err = catalog.WithMember(b, "capabilities", a.caps); err != nil {
		return nil, err
	}
	if a.discover {
		// The SDK marks its own answer complete after its middleware,
		// which reaches this one's no more.
		b = era.ForClient(era.Stateless, b)
	}
	return b, nil
}
