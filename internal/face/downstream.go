package face

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// downstream is one client session of the face and its host session: its
// composition (the profile's servers) and its own per-session instances.
type downstream struct {
	sess *host.Session
	h    *host.Host
}

func (d *downstream) end() { d.h.EndSession(d.sess.ID) }

// downstream returns the host session of a client session, made on its
// first use. Stateless (2026-07-28) requests have no protocol session:
// they share one host session per profile.
func (p *profile) downstream(ctx context.Context, ss *mcp.ServerSession) (*downstream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("this profile changed: reconnect")
	}
	if ss == nil || ss.ID() == "" {
		if p.shared == nil {
			d, err := p.newDownstream(ctx)
			if err != nil {
				return nil, err
			}
			p.shared = d
		}
		return p.shared, nil
	}
	if d, ok := p.sessions[ss]; ok {
		return d, nil
	}
	d, err := p.newDownstream(ctx)
	if err != nil {
		return nil, err
	}
	p.sessions[ss] = d
	p.register(ss, d)
	go func() {
		ss.Wait()
		p.unregister(ss)
		p.mu.Lock()
		_, live := p.sessions[ss]
		delete(p.sessions, ss)
		p.mu.Unlock()
		if live {
			d.end()
		}
	}()
	return d, nil
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

// withPeer marks ctx so that the server→client traffic of the call reaches
// client session ss.
func withPeer(ctx context.Context, ss *mcp.ServerSession, progressToken any) context.Context {
	return upstream.WithPeer(ctx, peer{ss}, progressToken)
}

// peer is a client session as the upstream connection's router sees it.
type peer struct{ ss *mcp.ServerSession }

func (p peer) Capabilities() *mcp.ClientCapabilities { return p.caps() }

func (p peer) caps() *mcp.ClientCapabilities {
	if ip := p.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &mcp.ClientCapabilities{}
}

func (p peer) Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.ss.ID() == "" {
		return nil, errors.New("the client called over MCP 2026-07-28 without a session, so plexus cannot forward this server's elicitation request to it")
	}
	if p.caps().Elicitation == nil {
		return nil, errors.New("the client that made this call does not support elicitation")
	}
	return p.ss.Elicit(ctx, params)
}

func (p peer) CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p.ss.ID() == "" {
		return nil, errors.New("the client called over MCP 2026-07-28 without a session, so plexus cannot forward this server's sampling request to it")
	}
	if p.caps().Sampling == nil {
		return nil, errors.New("the client that made this call does not support sampling")
	}
	return p.ss.CreateMessage(ctx, params)
}

func (p peer) ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if p.ss.ID() == "" {
		return nil, errors.New("the client called over MCP 2026-07-28 without a session, so plexus cannot ask it for its roots")
	}
	if p.caps().RootsV2 == nil {
		return nil, errors.New("the client that made this call does not offer roots")
	}
	return p.ss.ListRoots(ctx, params)
}

func (p peer) Progress(ctx context.Context, params *mcp.ProgressNotificationParams) {
	p.ss.NotifyProgress(ctx, params)
}

func (p peer) Log(ctx context.Context, params *mcp.LoggingMessageParams) {
	p.ss.Log(ctx, params)
}
