package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/sse"
)

// A server whose settings pin a session-era version is still asked, once
// before its handshake, whether it speaks MCP 2026-07-28 of its own: the
// pin holds Plexus back, not the server, and what a client reaching the
// server directly meets depends on the server alone. A client of that era
// meets a server that speaks only the session era by falling back to
// initialize; a bare profile of the pinned server offers it the same
// (face/route.go), which only the server's own answer can tell it.
//
// A streamable HTTP server is asked with one POST of its own. Over stdio
// the one connection is the handshake's, and a server that answers
// server/discover takes it as a request of that era on its session: asked
// before initialize, the go-sdk's takes it for its session's start and
// refuses the pinned initialize ("duplicate initialize") and exits; asked
// after, it answers, and from then on refuses the session era's
// server→client requests ("cannot be sent while serving" a request of the
// stateless era), which is what the pin is for. So a pinned stdio server
// is asked first, as an unpinned one is (probeStdio): one that speaks
// only the session era refuses it (or lets it go unanswered) and the
// pinned initialize follows on the same process, as the fallback of an
// unpinned handshake does; one that answers it is started again for the
// pinned handshake (startStdio), a second start only for a server that
// speaks both eras and is pinned.

// OwnEra is the era the server speaks of its own accord: the version its
// handshake settled on, or for a pinned server what the probe before it
// found — the pinned version when the server refused server/discover (it
// speaks only the session era), era.Stateless when it answered; "" when
// that is not known (a server not over streamable HTTP, a probe that got
// no answer).
func (c *Conn) OwnEra() string {
	if c.ownEra != "" || c.pinned {
		return c.ownEra
	}
	return c.ProtocolVersion()
}

// probeEra asks a pinned streamable HTTP server, as a client of MCP
// 2026-07-28 would before its first request, whether it speaks that era;
// its answer is the Conn's ownEra.
func (c *Conn) probeEra(ctx context.Context, s Spec) {
	c.pinned = true
	if s.Type != "http" {
		return
	}
	c.ownEra = probeHTTP(ctx, s)
	c.log.Debug("pinned server's own era", "own", c.ownEra, "pinned", s.ProtocolVersion)
}

// probeStdio asks a pinned stdio server, before anything else is sent
// to it, one server/discover as the SDK's client asks it first unpinned,
// and reads the answer as probeHTTP does; the stdio connection answers it
// "method not found" for a server that lets it go unanswered (its
// discoverTimeout). Anything else the server sends before its answer is
// dropped: before initialize there is no session for it to belong to.
func probeStdio(ctx context.Context, conn *stdioConn, s Spec) string {
	id, _ := jsonrpc.MakeID("plexus-era-probe")
	req := &jsonrpc.Request{ID: id, Method: methodDiscover}
	req.Params, _ = json.Marshal(map[string]any{"_meta": era.RequestMeta(era.Stateless, era.Caller{Info: s.ClientInfo})})
	if conn.Write(ctx, req) != nil {
		return ""
	}
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return ""
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.ID != id {
			continue
		}
		b, err := jsonrpc.EncodeMessage(resp)
		if err == nil && speaksStateless(b) {
			return era.Stateless
		}
		return s.ProtocolVersion
	}
}

// probeHTTP POSTs one server/discover to the server, as the SDK's client
// sends it first unpinned, on an HTTP client of its own, and reads the
// answer as that client does: a result naming a version of the stateless
// era, or a refusal naming one as supported, is a server of that era; any
// other refusal (an HTTP error, a JSON-RPC error) one that speaks only the
// session era. Nothing more is sent: no session is opened.
func probeHTTP(ctx context.Context, s Spec) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		return ""
	}
	hc, _, release := remoteHTTPClient(s, u)
	defer release()
	params := map[string]any{"_meta": era.RequestMeta(era.Stateless, era.Caller{Info: s.ClientInfo})}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "plexus-era-probe", "method": methodDiscover, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return ""
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		era.HeaderVersion: {era.Stateless}, "Mcp-Method": {methodDiscover}}
	resp, err := hc.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		if msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); speaksStateless(msg) {
			return era.Stateless
		}
		return s.ProtocolVersion
	}
	msg, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ""
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		events := sse.NewReader(bytes.NewReader(msg), 1<<20)
		for ev, err := events.Next(); ; ev, err = events.Next() {
			if err != nil {
				return ""
			}
			if strings.TrimSpace(ev.Data) != "" { // past a priming event
				msg = []byte(ev.Data)
				break
			}
		}
	}
	if speaksStateless(msg) {
		return era.Stateless
	}
	return s.ProtocolVersion
}

// speaksStateless reads an answer to server/discover: a result whose
// supportedVersions, or an unsupported-version error whose data's
// supported, names a version of the stateless era.
func speaksStateless(msg []byte) bool {
	var m struct {
		Result *struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
		Error *struct {
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	switch {
	case m.Result != nil:
		return slices.ContainsFunc(m.Result.SupportedVersions, era.IsStateless)
	case m.Error != nil:
		return slices.ContainsFunc(m.Error.Data.Supported, era.IsStateless)
	}
	return false
}
