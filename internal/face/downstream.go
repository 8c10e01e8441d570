//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if v, ok := p.byID.Load(ss.ID()); ok {
		v.(*frameSession).d.Store(d)
	}
	return d, nil
}

// track follows the session an initialize opened (by its id) to its end
// — a DELETE, the idle timeout (idle.go), its client gone (dropped.go), the
// profile's end — and then frees what
// the face holds for it: its host session and what the frame path knows.
func (p *profile) track(id, user string) {
	var ss *mcp.ServerSession
	for s := range p.srv.Sessions() {
		if s.ID() == id {
			ss = s
			break
		}
	}
	if ss == nil {
		return // ended already
	}
	p.register(ss, user) // known to the frame path from its first call on
	s := &sessionStreams{}
	s.touch()
	p.streams.Store(id, s)
	stopIdle := p.watchIdle(ss, s, p.def.idle)
	go func() {
		ss.Wait()
		stopIdle()
		p.streams.Delete(id)
		p.unregister(ss)
		p.mu.Lock()
		d, live := p.sessions[ss]
		delete(p.sessions, ss)
		p.mu.Unlock()
		if live {
			d.end()
		}
		p.f.poke()
	}()
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

// Ask puts a server's request to the client session through the SDK,
// which asks on the session's streams (the call's own, when ctx is the
// call's) and checks what it sends against what the client declared.
func (p peer) Ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if p.ss.ID() == "" {
		return nil, noSession(method)
	}
	if err := refusal(p.caps(), method); err != nil {
		return nil, err
	}
	defer asking(ctx)()
	var res any
	var err error
	switch method {
	case "elicitation/create":
		var in mcp.ElicitParams
		if err := decodeAsk(method, params, &in); err != nil {
			return nil, err
		}
		res, err = p.ss.Elicit(ctx, &in)
	case "sampling/createMessage":
		var in mcp.CreateMessageParams
		if err := decodeAsk(method, params, &in); err != nil {
			return nil, err
		}
		res, err = p.ss.CreateMessage(ctx, &in)
	case "roots/list":
		var in mcp.ListRootsParams
		if err := decodeAsk(method, params, &in); err != nil {
			return nil, err
		}
		res, err = p.ss.ListRoots(ctx, &in)
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "plexus does not forward " + method}
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// decodeAsk decodes a server's request for the SDK's typed session calls.
func decodeAsk(method string, params json.RawMessage, into any) error {
	if err := json.Unmarshal(params, into); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "plexus: malformed " + upstream.AskMethods[method] + ": " + err.Error()}
	}
	return nil
}

// decodeCaps decodes capabilities as a client declared them. The SDK's
// struct keeps roots in a field encoding/json does not fill (RootsV2), so
// that a client's roots are read here, or they would be lost.
func decodeCaps(raw []byte) (*mcp.ClientCapabilities, error) {
	caps := &mcp.ClientCapabilities{}
	if err := json.Unmarshal(raw, caps); err != nil {
		return nil, err
	}
	var roots struct {
		Roots *mcp.RootCapabilities `json:"roots"`
	}
	if err := json.Unmarshal(raw, &roots); err != nil {
		return nil, err
	}
	caps.RootsV2 = roots.Roots
	return caps, nil
}

// refusal is why a client cannot be asked method: it did not declare the
// capability (nil if it did).
func refusal(caps *mcp.ClientCapabilities, method string) error {
	switch {
	case method == "elicitation/create" && caps.Elicitation == nil:
		return errors.New("the client that made this call does not support elicitation")
	case method == "sampling/createMessage" && caps.Sampling == nil:
		return errors.New("the client that made this call does not support sampling")
	case method == "roots/list" && caps.RootsV2 == nil:
		return errors.New("the client that made this call does not offer roots")
	}
	return nil
}

// noSession is the refusal of a server's request to a client that has no
// session to be asked on.
func noSession(method string) error {
	return fmt.Errorf("the client called over MCP 2026-07-28 without a session, so plexus cannot forward this server's %s to it", upstream.AskMethods[method])
}

func (p peer) Progress(ctx context.Context, params *mcp.ProgressNotificationParams) {
	p.ss.NotifyProgress(ctx, params)
}

func (p peer) Log(ctx context.Context, params *mcp.LoggingMessageParams) {
	p.ss.Log(ctx, params)
}
