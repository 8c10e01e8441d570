// Package localapi serves the daemon's settings API: HTTP/JSON under /v1,
// one route table, one error shape (apitype.Error) for every failure, and an
// identity check on every request.
//
// The socket is reachable by more than the daemon's clients: any program
// of the user that knows its path, the servers the daemon itself runs, a
// sandboxed server if its sandbox lets it connect. So a request over it
// passes two checks, and the API fails closed when either cannot be made
// (docs/security.md):
//
//   - the caller's process (checked once per connection): its user, read
//     from the kernel (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and
//     FreeBSD, the peer process's token on Windows), must be the daemon's
//     own (or root's); and where the platform can tell, it must not be a
//     process the daemon started, nor (Linux) run in other PID or user
//     namespaces than the daemon's — as a sandboxed server does;
//   - the request must carry the daemon's token (Authorization: Bearer),
//     the content of $PLEXUS_HOME/token, 0600 in the 0700 home: what the
//     CLI, the terminal UI and `plexus mcp` read, and what a sandbox that
//     keeps a server out of the home keeps from it. It is the same token
//     the loopback address takes.
package localapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/buildinfo"
	"github.com/plexus-mcp/plexus/internal/connlimit"
	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/registry"

	"github.com/plexus-mcp/plexus/internal/jsonerr"
)

// Version is reported by GET /v1/status: the binary's own (buildinfo).
var Version = buildinfo.Get().Version

// Limits on request bodies.
const (
	maxSettingsBody = 1 << 20  // a server's config, a secret
	maxCallBody     = 16 << 20 // tool arguments
)

// Handler is the API's http.Handler.
type Handler struct {
	// HTTPAddr is the daemon's loopback TCP address, reported by
	// GET /v1/status ("" when it listens on none); set before serving.
	HTTPAddr string
	// UILogin mints a one-time login link to the web page, for
	// POST /v1/ui/login; nil when the daemon serves no page. Set before
	// serving.
	UILogin func() (apitype.UILogin, error)
	// Token is what every request must carry; set before serving. Without
	// one every request is refused.
	Token string
	// Registry reads MCP registries; nil makes one with its cache under
	// the home on first use.
	Registry *registry.Client

	regOnce sync.Once
	// executable is the daemon's own program, which a client's entry
	// runs (os.Executable; a test's stands in).
	executable func() (string, error)
	host       *host.Host
	log        *slog.Logger
	mux        *http.ServeMux
}

// New returns the API handler over h.
func New(h *host.Host, log *slog.Logger) *Handler {
	a := &Handler{host: h, log: log, mux: http.NewServeMux(), executable: os.Executable}
	a.routes()
	return a
}

// Mount serves h at pattern behind the same peer check, for the MCP face
// that `plexus mcp` forwards to.
func (a *Handler) Mount(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }

func (a *Handler) routes() {
	m := a.mux
	m.HandleFunc("GET /v1/status", a.status)
	m.HandleFunc("GET /v1/servers", a.listServers)
	m.HandleFunc("POST /v1/servers", a.addServer)
	m.HandleFunc("GET /v1/servers/{name}", a.getServer)
	m.HandleFunc("PUT /v1/servers/{name}", a.putServer)
	m.HandleFunc("DELETE /v1/servers/{name}", a.deleteServer)
	m.HandleFunc("POST /v1/servers/{name}/enable", a.setEnabled(true))
	m.HandleFunc("POST /v1/servers/{name}/disable", a.setEnabled(false))
	m.HandleFunc("GET /v1/tools", a.tools)
	m.HandleFunc("POST /v1/call", a.call)
	m.HandleFunc("GET /v1/resources", a.resources)
	m.HandleFunc("POST /v1/resources/read", a.readResource)
	m.HandleFunc("GET /v1/prompts", a.prompts)
	m.HandleFunc("POST /v1/prompts/get", a.getPrompt)
	m.HandleFunc("GET /v1/secrets", a.listSecrets)
	m.HandleFunc("PUT /v1/secrets/{name}", a.setSecret)
	m.HandleFunc("DELETE /v1/secrets/{name}", a.deleteSecret)
	m.HandleFunc("GET /v1/events", a.events)
	m.HandleFunc("GET /v1/audit", a.auditRecords)
	m.HandleFunc("GET /v1/audit/follow", a.followAudit)
	m.HandleFunc("GET /v1/servers/{name}/logs", a.logs)
	m.HandleFunc("POST /v1/servers/{name}/restart", a.restart)
	m.HandleFunc("POST /v1/servers/{name}/accept", a.accept)
	m.HandleFunc("POST /v1/servers/{name}/approve", a.approve)
	m.HandleFunc("GET /v1/approvals", a.callApprovals)
	m.HandleFunc("POST /v1/approvals/{id}", a.decideCall)
	m.HandleFunc("POST /v1/servers/{name}/login", a.login)
	m.HandleFunc("POST /v1/servers/{name}/login/complete", a.completeLogin)
	m.HandleFunc("POST /v1/servers/{name}/logout", a.logout)
	m.HandleFunc("POST /v1/reload", a.reload)
	m.HandleFunc("POST /v1/reload/discard", a.discardEdits)
	m.HandleFunc("GET /v1/revisions", a.listRevisions)
	m.HandleFunc("POST /v1/revisions/{name}/restore", a.restoreRevision)
	m.HandleFunc("POST /v1/import", a.importServers)
	m.HandleFunc("GET /v1/export", a.export)
	m.HandleFunc("POST /v1/sessions", a.newSession)
	m.HandleFunc("GET /v1/sessions/{id}", a.getSession)
	m.HandleFunc("DELETE /v1/sessions/{id}", a.endSession)
	m.HandleFunc("GET /v1/sessions/{id}/tools", a.sessionTools)
	m.HandleFunc("POST /v1/sessions/{id}/call", a.sessionCall)
	m.HandleFunc("POST /v1/sessions/{id}/turn", a.sessionTurn)
	m.HandleFunc("GET /v1/sessions/{id}/events", a.sessionEvents)
	m.HandleFunc("POST "+uiLoginPath, a.uiLogin)
	m.HandleFunc("POST /v1/suggest/name", a.suggestName)
	m.HandleFunc("GET /v1/settings", a.getSettings)
	m.HandleFunc("PUT /v1/settings", a.putSettings)
	m.HandleFunc("GET /v1/registry/servers", a.listRegistry)
	m.HandleFunc("GET /v1/registry/servers/{name}", a.showRegistry)
	m.HandleFunc("POST /v1/registry/plan", a.planRegistry)
	m.HandleFunc("GET /v1/clients", a.listClients)
	m.HandleFunc("POST /v1/clients/{client}/import", a.importClient)
	m.HandleFunc("POST /v1/clients/{client}/connect", a.connectClient)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound,
			Message: "no such API route: " + r.Method + " " + r.URL.Path,
			Hint:    "the CLI and the daemon may be different versions: restart the daemon"})
	})
}

// ServeHTTP checks the caller's process and token, then routes.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkPeer(r.Context()); err != nil {
		a.refuse(w, http.StatusForbidden, err.Error(),
			"run plexus as the user that runs the daemon, outside any sandbox or container, and not from a server the daemon runs")
		return
	}
	if !bearer(r, a.Token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="plexus"`)
		a.refuse(w, http.StatusUnauthorized, "a token is required: send Authorization: Bearer <the content of $PLEXUS_HOME/token>",
			"run plexus with the daemon's PLEXUS_HOME: it reads the token from $PLEXUS_HOME/token")
		return
	}
	connlimit.Prove(r.Context())
	a.mux.ServeHTTP(w, r)
}

// refuse answers a request the guard refused, and closes its connection:
// a refused caller gets nothing more of it, not even the reading of the
// rest of its body. hint is what a person refused should do (a front end
// shows it instead of its own remedy for the code).
func (a *Handler) refuse(w http.ResponseWriter, status int, reason, hint string) {
	a.log.Warn("request refused", "reason", reason)
	w.Header().Set("Connection", "close")
	writeError(w, status, apitype.ErrorBody{Code: apitype.CodeUnauthorized, Message: "refused: " + reason, Hint: hint})
}

// bearer reports whether r carries token as its bearer token. No token
// is never carried.
func bearer(r *http.Request, token string) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(token)) == 1
}

type connKey struct{}

// peerConn is an accepted connection and the verdict on its caller,
// made at its first request.
type peerConn struct {
	c    net.Conn
	once sync.Once
	err  error
}

// ConnContext records the accepted connection so that ServeHTTP can check
// the peer's credentials. Install it as http.Server.ConnContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &peerConn{c: c})
}

// checkPeer allows only the daemon's own user, or root, over a unix
// socket, and of those only processes the platform admits (peer_*.go).
// Anything it cannot verify is refused. The verdict holds for the
// connection: the kernel names the process that connected, once.
func checkPeer(ctx context.Context) error {
	pc, _ := ctx.Value(connKey{}).(*peerConn)
	if pc == nil {
		return errors.New("the caller's identity cannot be checked on this connection")
	}
	pc.once.Do(func() { pc.err = verifyPeer(pc.c) })
	return pc.err
}

func verifyPeer(c net.Conn) error {
	for {
		nc, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = nc.NetConn()
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("the caller's identity cannot be checked on this connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return errors.New("the caller's identity cannot be checked")
	}
	var peerErr error
	if err := raw.Control(func(fd uintptr) { peerErr = peerAllowed(fd) }); err != nil {
		return errors.New("the caller's identity cannot be checked")
	}
	return peerErr
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// Compact: results of calls can be large, and every front end formats
	// what it shows; indenting here would be work on the hot path of a call.
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, body apitype.ErrorBody) {
	writeJSON(w, status, apitype.Error{Err: body})
}

func setRevision(w http.ResponseWriter, rev int64) {
	w.Header().Set(apitype.HeaderETag, strconv.Quote(strconv.FormatInt(rev, 10)))
}

// ifMatch reads the revision a write is based on; 0 when absent.
func ifMatch(r *http.Request) (int64, error) {
	v := r.Header.Get(apitype.HeaderIfMatch)
	if v == "" {
		return 0, nil
	}
	if uq, err := strconv.Unquote(v); err == nil {
		v = uq
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("If-Match must be a revision number")
	}
	return n, nil
}

// decodeBody decodes a JSON request body strictly.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, apitype.ErrorBody{Code: apitype.CodeTooLarge,
				Message: "request body is larger than " + strconv.FormatInt(limit, 10) + " bytes"})
			return false
		}
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "malformed request body: " + jsonerr.Describe(err)})
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, apitype.ErrorBody{Code: apitype.CodeBadRequest,
			Message: "malformed request body: trailing data"})
		return false
	}
	return true
}
