package face

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// Who the client of a request is — its name and version, the profile and
// face session it came through — rides the request's context to the host
// (audit.WithClient), for the audit log's records and the policy's rules.
// A session-era client said it in its initialize; a stateless (MCP
// 2026-07-28) one says it in each request's _meta.

// withClient notes the client of a request of session s on ctx.
func (s *session) withClient(ctx context.Context) context.Context {
	c := audit.Client{Profile: s.p.name, Session: s.id}
	if s.ss != nil {
		if ip := s.ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			c.Name, c.Version = ip.ClientInfo.Name, ip.ClientInfo.Version
		}
	}
	return audit.WithClient(ctx, c)
}

// withStatelessClient notes on ctx the client of a stateless request
// whose params are raw.
func (p *profile) withStatelessClient(ctx context.Context, params []byte) context.Context {
	c := audit.Client{Profile: p.name}
	jsonscan.Members(params, func(k, v []byte) bool {
		if string(k) != "_meta" {
			return true
		}
		jsonscan.Members(v, func(k, v []byte) bool {
			if string(k) == era.MetaClientInfo {
				var info mcp.Implementation
				if json.Unmarshal(v, &info) == nil {
					c.Name, c.Version = info.Name, info.Version
				}
				return false
			}
			return true
		})
		return false
	})
	return audit.WithClient(ctx, c)
}

// withSDKClient notes on ctx the client of a request the SDK serves.
func (p *profile) withSDKClient(ctx context.Context, req mcp.Request) context.Context {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
		if s := p.sessionByID(ss.ID()); s != nil {
			return s.withClient(ctx)
		}
	}
	c := audit.Client{Profile: p.name}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		ctx = host.WithApprovalScope(ctx, extra.Header.Get(apitype.HeaderClientScope))
	}
	if info, ok := paramsMeta(req)[era.MetaClientInfo].(map[string]any); ok {
		c.Name, _ = info["name"].(string)
		c.Version, _ = info["version"].(string)
	}
	return audit.WithClient(ctx, c)
}

// paramsMeta is the _meta of req's params; nil when it has none. A
// message sent without params reaches the SDK's handlers as a typed nil
// (a nil *mcp.InitializedParams, say), whose GetMeta panics.
func paramsMeta(req mcp.Request) map[string]any {
	params := req.GetParams()
	if params == nil {
		return nil
	}
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return params.GetMeta()
}
