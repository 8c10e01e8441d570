//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// downstream is one client's host session: its composition (the
// profile's servers) and its own per-session instances.
type downstream struct {
	sess *host.Session
	h    *host.Host
}

func (d *downstream) end() { d.h.EndSession(d.sess.ID) }

// downstream returns the host session of the client of a request the
// SDK serves: its session's, made on its first use. Stateless (2026-07-28)
// requests have no protocol session: they share one host session per
// profile.
func (p *profile) downstream(ctx context.Context, ss *mcp.ServerSession) (*downstream, error) {
	if ss != nil && ss.ID() != "" {
		s := p.sessionByID(ss.ID())
		if s == nil {
			return nil, errors.New("the session has ended")
		}
		return s.downstream(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("this profile changed: reconnect")
	}
	if p.shared == nil {
		d, err := p.newDownstream(ctx)
		if err != nil {
			return nil, err
		}
		p.shared = d
	}
	return p.shared, nil
}

func (p *profile) newDownstream(ctx context.Context) (*downstream, error) {
	var off []string
	if p.def.servers != nil {
		_, all := p.f.h.Servers()
		for _, s := range all {
			if !p.def.has(s.Name) {
				off = append(off, s.Name)
			}
		}
	}
	s, err := p.f.h.NewSession(context.WithoutCancel(ctx), off)
	if err != nil {
		return nil, fmt.Errorf("starting a session: %w", err)
	}
	return &downstream{sess: s, h: p.f.h}, nil
}

// withPeer marks ctx, of a request the SDK serves, so that the
// server→client traffic it causes reaches the client: on a session, on
// the request's exchange (attach put it in ctx).
func (p *profile) withPeer(ctx context.Context, ss *mcp.ServerSession, progressToken any) context.Context {
	if ss != nil && ss.ID() != "" {
		if s, ex := p.sessionByID(ss.ID()), exchangeFrom(ctx); s != nil && ex != nil {
			return upstream.WithPeer(ctx, &sessionPeer{s, ex}, progressToken)
		}
	}
	return upstream.WithPeer(ctx, sdkPeer{ss}, progressToken)
}

// sdkPeer is the client of a stateless request the SDK's stateless
// handler serves: it cannot be asked anything, and the SDK carries its
// progress and log messages on the request's own stream.
type sdkPeer struct{ ss *mcp.ServerSession }

func (p sdkPeer) Capabilities() *mcp.ClientCapabilities {
	if p.ss != nil {
		if ip := p.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
			return ip.Capabilities
		}
	}
	return &mcp.ClientCapabilities{}
}

func (p sdkPeer) Ask(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, noSession(method)
}

func (p sdkPeer) Progress(ctx context.Context, params *mcp.ProgressNotificationParams) {
	if p.ss != nil {
		p.ss.NotifyProgress(ctx, params)
	}
}

func (p sdkPeer) Log(ctx context.Context, params *mcp.LoggingMessageParams) {
	if p.ss != nil {
		p.ss.Log(ctx, params)
	}
}
