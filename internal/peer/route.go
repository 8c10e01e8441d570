package peer

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
)

// Router sends a session-era request whose session another replica holds
// to that replica over the internal channel, and every other request to
// Next (this replica's face). The replica that holds the session serves
// the exchange — POSTs, the GET stream, DELETE — as if the client had
// come to it directly.
type Router struct {
	reg   *Registry
	next  http.Handler
	log   *slog.Logger
	proxy *httputil.ReverseProxy
}

// NewRouter returns the router of reg's replica in front of next, which
// reaches the other replicas through tr (signed for each).
func NewRouter(reg *Registry, tr *Transport, next http.Handler, log *slog.Logger) *Router {
	rt := &Router{reg: reg, next: next, log: log}
	rt.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "https"
			pr.Out.URL.Host = addrOf(pr.In)
			pr.Out.Host = pr.In.Host // the client's, as it sent it
			pr.SetXForwarded()
		},
		Transport:      tr,
		ModifyResponse: misdirected,
		FlushInterval:  -1, // event streams go through as they come
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler:   rt.failed,
	}
	return rt
}

type addrKey struct{}

func addrOf(r *http.Request) string { return r.Context().Value(addrKey{}).(string) }

// ServeHTTP serves /mcp and /mcp/NAME.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := ReplicaOf(r.Header.Get("Mcp-Session-Id"))
	if !ok || id == rt.reg.Self {
		rt.next.ServeHTTP(w, r)
		return
	}
	rep, err := rt.reg.Find(r.Context(), id)
	switch {
	case errors.Is(err, ErrGone):
		sessionGone(w)
		return
	case err != nil:
		rt.log.Warn("internal channel: cannot find the replica of a session", "replica", id, "err", err)
		http.Error(w, "the replica that holds this session cannot be found now: try again", http.StatusServiceUnavailable)
		return
	}
	rt.proxy.ServeHTTP(w, r.WithContext(To(contextWith(r, rep.Addr), id)))
}

// errMisdirected is a request the replica at a session's address refused
// as made for another: the session's replica is gone, and another took
// its address.
var errMisdirected = errors.New("the replica at that address is another")

func misdirected(resp *http.Response) error {
	if resp.StatusCode == http.StatusMisdirectedRequest {
		resp.Body.Close()
		return errMisdirected
	}
	return nil
}

// failed answers a request the replica holding its session did not
// answer. One that never reached it (the dial failed: the replica is
// gone) gets the 404 that tells a client to open a new session; one that
// may have reached it gets 502, so that a call whose outcome is unknown
// is not taken for one never made.
func (rt *Router) failed(w http.ResponseWriter, r *http.Request, err error) {
	if NotSent(err) || errors.Is(err, errMisdirected) {
		sessionGone(w)
		return
	}
	rt.log.Warn("internal channel: a forwarded request failed", "addr", addrOf(r), "err", err)
	http.Error(w, "the replica that holds this session did not answer: the request's outcome is unknown", http.StatusBadGateway)
}

// sessionGone is MCP's answer to a request on a session the server no
// longer has: "The server MAY terminate the session at any time, after
// which it MUST respond to requests containing that session ID with HTTP
// 404 Not Found", upon which the client starts a new one.
func sessionGone(w http.ResponseWriter) {
	http.Error(w, "session not found: its replica is gone; start a new session", http.StatusNotFound)
}

func contextWith(r *http.Request, addr string) context.Context {
	return context.WithValue(r.Context(), addrKey{}, addr)
}
