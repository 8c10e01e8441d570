// Package localapi serves the daemon's settings API: HTTP/JSON under /v1,
// one route table, one error shape (apitype.Error) for every failure, and an
// identity check on every request.
//
// Over the unix socket the peer's user is read from the kernel (SO_PEERCRED
// on Linux, LOCAL_PEERCRED on macOS and FreeBSD, the peer process's token
// on Windows) and must be the daemon's own (or root's); if the check cannot
// be made the request is refused — the API fails closed.
package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/buildinfo"
	"github.com/plexus-mcp/plexus/internal/host"

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

	host *host.Host
	log  *slog.Logger
	mux  *http.ServeMux
}

// New returns the API handler over h.
func New(h *host.Host, log *slog.Logger) *Handler {
	a := &Handler{host: h, log: log, mux: http.NewServeMux()}
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
	m.HandleFunc("GET /v1/servers/{name}/logs", a.logs)
	m.HandleFunc("POST /v1/servers/{name}/restart", a.restart)
	m.HandleFunc("POST /v1/servers/{name}/accept", a.accept)
	m.HandleFunc("POST /v1/servers/{name}/approve", a.approve)
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
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apitype.ErrorBody{Code: apitype.CodeNotFound,
			Message: "no such API route: " + r.Method + " " + r.URL.Path,
			Hint:    "the CLI and the daemon may be different versions: restart the daemon"})
	})
}

// ServeHTTP checks the caller's identity, then routes.
func (a *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkPeer(r.Context()); err != nil {
		a.log.Warn("request refused", "reason", err.Error())
		writeError(w, http.StatusForbidden, apitype.ErrorBody{Code: apitype.CodeUnauthorized,
			Message: "refused: " + err.Error()})
		return
	}
	a.mux.ServeHTTP(w, r)
}

type connKey struct{}

// ConnContext records the accepted connection so that ServeHTTP can check
// the peer's credentials. Install it as http.Server.ConnContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// checkPeer allows only the daemon's own user, or root, over a unix socket.
// How the kernel names the peer is the platform's (peer_*.go). Anything it
// cannot verify is refused.
func checkPeer(ctx context.Context) error {
	c, _ := ctx.Value(connKey{}).(net.Conn)
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
