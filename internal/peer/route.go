package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
)

// Router sends a session-era request whose session another replica holds
// to that replica over the internal channel, and every other request to
// Next (this replica's face). The replica that holds the session serves
// the exchange — POSTs, the GET stream, DELETE — as if the client had
// come to it directly.
//
// A request outside any session (MCP 2026-07-28) that reads a kept
// result whose id names another replica (ResultsURI) goes to that
// replica the same way: kept results live in the memory of the replica
// that kept them, and it alone can tell whether the reader is the one
// whose call made the result (with the client's own token, checked there
// again). A read of a gone replica's result is answered here: that
// replica's kept results are gone with it.
type Router struct {
	// ResultsURI starts the URI of a kept result, whose id (up to the
	// next "/") is a session id's form: the replica, a dot, random bits.
	// "" sends no read elsewhere.
	ResultsURI string

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
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		if read, ok := rt.resultRead(r); ok && read.replica != rt.reg.Self {
			rt.pass(w, r.WithContext(context.WithValue(r.Context(), readKey{}, read)), read.replica)
			return
		}
	}
	id, ok := ReplicaOf(sid)
	if !ok || id == rt.reg.Self {
		rt.next.ServeHTTP(w, r)
		return
	}
	rt.pass(w, r, id)
}

// pass sends r to replica id, which serves it.
func (rt *Router) pass(w http.ResponseWriter, r *http.Request, id string) {
	rep, err := rt.reg.Find(r.Context(), id)
	switch {
	case errors.Is(err, ErrGone):
		rt.gone(w, r)
		return
	case err != nil:
		rt.log.Warn("internal channel: cannot find a replica", "replica", id, "err", err)
		http.Error(w, "the replica that holds this session or result cannot be found now: try again", http.StatusServiceUnavailable)
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
		rt.gone(w, r)
		return
	}
	rt.log.Warn("internal channel: a forwarded request failed", "addr", addrOf(r), "err", err)
	if read, ok := r.Context().Value(readKey{}).(resultRead); ok {
		// A read changes nothing: the client may simply read again.
		read.answer(w, fmt.Sprintf("result %s: the replica that kept it (%s) did not answer; read it again", read.id, read.replica))
		return
	}
	http.Error(w, "the replica that holds this session did not answer: the request's outcome is unknown", http.StatusBadGateway)
}

// gone answers a request whose replica is gone: a session's with 404, a
// read of a kept result's with the JSON-RPC error of a resource not
// found, saying why. (Anyone can make an id that names a gone replica:
// the answer tells nothing of a result.)
func (rt *Router) gone(w http.ResponseWriter, r *http.Request) {
	read, ok := r.Context().Value(readKey{}).(resultRead)
	if !ok {
		sessionGone(w)
		return
	}
	read.answer(w, fmt.Sprintf("result %s cannot be read: the replica that kept it (%s) is gone — stopped or failed — and the results it kept with it; call the tool again", read.id, read.replica))
}

// answer answers the read with MCP's JSON-RPC error for a resource not
// found, saying msg.
func (read resultRead) answer(w http.ResponseWriter, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": read.rpcID,
		"error": map[string]any{"code": codeResourceNotFound, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// codeResourceNotFound is MCP's JSON-RPC error for a resource that does
// not exist.
const codeResourceNotFound = -32002

// resultRead is a request outside a session that reads a kept result:
// its JSON-RPC id, the result's id, and the replica that id names.
type resultRead struct {
	rpcID       json.RawMessage
	id, replica string
}

type readKey struct{}

// maxRead bounds the body the router looks into: a resources/read is a
// few hundred bytes; anything longer is not one and is left to the face.
const maxRead = 16 << 10

// resultRead reports whether r reads a kept result whose id names a
// replica. It reads at most maxRead bytes of the body and leaves the
// body whole for whoever serves r.
func (rt *Router) resultRead(r *http.Request) (resultRead, bool) {
	if rt.ResultsURI == "" || r.Method != http.MethodPost || r.ContentLength > maxRead {
		return resultRead{}, false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxRead+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > maxRead || !bytes.Contains(head, []byte(rt.ResultsURI)) {
		return resultRead{}, false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(head, &msg) != nil || msg.Method != "resources/read" || msg.ID == nil {
		return resultRead{}, false
	}
	rest, ok := strings.CutPrefix(msg.Params.URI, rt.ResultsURI)
	id, _, _ := strings.Cut(rest, "/")
	replica, named := ReplicaOf(id)
	if !ok || !named {
		return resultRead{}, false
	}
	return resultRead{rpcID: msg.ID, id: id, replica: replica}, true
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (b readCloser) Close() error { return b.c.Close() }

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
