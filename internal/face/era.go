package face

import (
	"bytes"
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// Answers are era-correct: a client of the session era never sees a member
// that only MCP 2026-07-28 defines at the top of a result — the SDK writes
// ttlMs and cacheScope on every list whatever the session's version, and a
// 2026-07-28 server's result carries resultType, which passes through a
// proxy unless it is taken out. A 2026-07-28 client gets what that era
// requires (completed, frame.go).

// newEraMembers are the result members a session-era client must not see.
var newEraMembers = map[string]bool{"resultType": true, "ttlMs": true, "cacheScope": true}

// sessionEraResult drops newEraMembers from the top of a result; b is
// returned as it is when it has none (the usual case: one scan).
func sessionEraResult(b []byte) []byte {
	if !bytes.Contains(b, []byte(`"resultType"`)) && !bytes.Contains(b, []byte(`"ttlMs"`)) && !bytes.Contains(b, []byte(`"cacheScope"`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	out = append(out, '{')
	ok := jsonscan.Members(b, func(k, v []byte) bool {
		if newEraMembers[string(k)] {
			return true
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, `":`...)
		out = append(out, v...)
		return true
	})
	if !ok {
		return b
	}
	return append(out, '}')
}

// eraMiddleware makes the SDK's answers to session-era clients era-correct.
func eraMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !sessionEra(req) {
			return res, err
		}
		return sessionEraAnswer{res}, nil
	}
}

// sessionEra reports whether req came on a session of the session era.
func sessionEra(req mcp.Request) bool {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil || ss.ID() == "" {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion < version2026
}

// sessionEraAnswer is a result written for a session-era client.
type sessionEraAnswer struct{ mcp.Result }

func (a sessionEraAnswer) MarshalJSON() ([]byte, error) {
	b, err := marshalSDK(a.Result) // as the SDK writes it: no HTML escapes
	if err != nil {
		return nil, err
	}
	return sessionEraResult(b), nil
}
