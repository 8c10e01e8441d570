package daemon

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/audit"
)

// notingChanges serves h and, after each request of the API that can
// change something (a method other than GET, HEAD or OPTIONS), puts a
// value in changed, so that the daemon settles again a second later
// (resettle): a settings change maps the code of the API, the settings
// store and the validation, and nothing else would shed it. Calls through
// the API (a tool, a resource, a prompt) change nothing and are left out:
// a client calling in a loop would otherwise have the daemon shed the
// code it is running every second.
//
// Each such request is also a record of the audit log (kind settings):
// its method and route, the server it names, its outcome by the answer's
// status, and by which door it came (via: "socket" for the CLI and TUI,
// "web" for the web page). Never its body, which may hold a secret.
func notingChanges(h http.Handler, changed chan<- struct{}, alog *audit.Log, via string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !changes(r) {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		auditChange(r, alog, via, sw.status, time.Since(start))
		select {
		case changed <- struct{}{}:
		default:
		}
	})
}

// changes reports whether r is a request of the API that may change the
// daemon's settings or servers.
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	path, ok := strings.CutPrefix(r.URL.Path, apitype.APIVersion+"/")
	if !ok {
		return false // the face, mounted beside the API, or nothing
	}
	switch path {
	case "call", "resources/read", "prompts/get", "suggest/name", "registry/plan":
		return false
	}
	// A session's calls and turns are the MCP traffic of a client of the
	// API, not settings.
	return !strings.HasPrefix(path, "sessions")
}

// auditChange records one settings change.
func auditChange(r *http.Request, alog *audit.Log, via string, status int, d time.Duration) {
	if alog == nil {
		return
	}
	path := strings.TrimPrefix(r.URL.Path, apitype.APIVersion)
	rec := audit.Record{Kind: audit.KindSettings, Tool: r.Method + " " + path, Outcome: "ok", Reason: "via " + via, Ms: audit.Millis(d)}
	if rest, ok := strings.CutPrefix(path, "/servers/"); ok {
		rec.Server, _, _ = strings.Cut(rest, "/")
	}
	if status >= 400 {
		rec.Outcome = "error " + strconv.Itoa(status)
	}
	alog.Record(r.Context(), rec)
}

// statusWriter notes the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush and Unwrap keep what the answer's writer can do.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
