// Package webui serves the daemon's web page, Settings → MCP Servers, on
// the loopback TCP address: a static page and one small script, embedded in
// the binary, that call the same settings API as the CLI under /api/v1/.
//
// It has its own guard (see guard.go), separate from the token guard of
// /metrics and /mcp: a browser holds no token, so the page is reached
// through a one-time login link that `plexus ui` gets over the unix socket
// and exchanges for an HttpOnly, SameSite=Strict session cookie and a page
// token, which the login redirect hands to the page in its fragment and the
// page sends as a header on every API call (sessions.go says why the
// cookie alone is not enough). The page never sees the daemon's token, and stored secret values never reach it:
// the API it calls returns names only.
package webui

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Options configure the web page.
type Options struct {
	// API is the settings API's route table (paths under /v1), reached by
	// requests the guard let through; it must not check the peer again.
	API http.Handler
	Log *slog.Logger
	// CodeTTL is how long a login code stays valid; 0 means DefaultCodeTTL.
	CodeTTL time.Duration
	// SessionTTL is how long a session lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
}

// Server is the web page's http.Handler.
type Server struct {
	api   http.Handler
	log   *slog.Logger
	files http.Handler
	auth  *sessions
}

// New returns the web page's handler.
func New(opts Options) *Server {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{
		api:   opts.API,
		log:   log,
		files: http.FileServerFS(sub),
		auth:  newSessions(opts.CodeTTL, opts.SessionTTL),
	}
}

// LoginLink mints a one-time login link for the page served at addr (the
// daemon's loopback host:port).
func (s *Server) LoginLink(addr string) (string, time.Time, error) {
	code, exp, err := s.auth.newCode()
	if err != nil {
		return "", time.Time{}, err
	}
	return "http://" + addr + "/login?code=" + code, exp, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setHeaders(w.Header())
	if status, msg := s.check(r); status != 0 {
		s.refuse(w, r, status, msg)
		return
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/api/v1/"):
		s.serveAPI(w, r)
	case p == "/login":
		s.login(w, r)
	case p == "/logout":
		s.logout(w, r)
	case p == "/" || p == "/app.js" || p == "/oauth.js" || p == "/guide.js" || p == "/app.css":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		s.files.ServeHTTP(w, r)
	default:
		s.refuse(w, r, http.StatusNotFound, "no such page: "+p)
	}
}

// serveAPI passes a request with a valid session to the settings API, with
// the /api prefix taken off.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.auth.valid(sessionCookie(r), pageToken(r)) {
		s.refuse(w, r, http.StatusUnauthorized, "not logged in: run `plexus ui` for a login link")
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/api")
	r2.URL.RawPath = ""
	if r.URL.RawPath != "" {
		r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, "/api")
	}
	if q := r.URL.Query(); q.Has(pageTokenParam) {
		// The page's credential is the page's: the API never sees it.
		q.Del(pageTokenParam)
		r2.URL.RawQuery = q.Encode()
	}
	s.api.ServeHTTP(noStore{w}, r2)
}

// login exchanges a one-time code for a session cookie, then sends the
// browser to the page. The code leaves the address bar with the redirect.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	id, token, err := s.auth.redeem(r.URL.Query().Get("code"))
	if err != nil {
		s.refuse(w, r, http.StatusForbidden, err.Error())
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(s.auth.sessionTTL / time.Second)})
	s.log.Info("web page login")
	// The fragment never leaves the browser: the page reads it, keeps it in
	// its origin's sessionStorage and takes it out of the address bar.
	http.Redirect(w, r, "/#"+pageTokenParam+"="+token, http.StatusSeeOther)
}

// logout ends the session: POST with the session, like any change.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	id := sessionCookie(r)
	if !s.auth.valid(id, pageToken(r)) {
		s.refuse(w, r, http.StatusUnauthorized, "not logged in")
		return
	}
	s.auth.end(id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

// pageToken is the request's page token: the header, or on the event
// stream (opened by EventSource, which sends no custom headers) the query.
func pageToken(r *http.Request) string {
	if t := r.Header.Get(pageTokenHeader); t != "" {
		return t
	}
	if r.Method == http.MethodGet && r.URL.Path == "/api/v1/events" {
		return r.URL.Query().Get(pageTokenParam)
	}
	return ""
}

func sessionCookie(r *http.Request) string {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return ""
	}
	return c.Value
}
