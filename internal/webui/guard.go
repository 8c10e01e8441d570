package webui

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/localapi"
)

// The guard (threats T1 and T2 of the security notes): DNS rebinding,
// cross-site requests and clickjacking.
//
//   - Host must name the loopback interface (a rebound name is refused).
//   - Origin, when present, must be the page's own.
//   - Sec-Fetch-Site "cross-site" is refused; a change needs "same-origin"
//     when the browser sends the header at all.
//   - A change (any method but GET and HEAD) needs Content-Type
//     application/json: a CORS-simple type, which a foreign page can send
//     without a preflight, gets 415. It needs the session cookie too
//     (SameSite=Strict, so a cross-site request never carries it).
//   - Every answer carries a strict CSP without inline script, no framing,
//     nosniff and no referrer; API answers are never cached.

// csp allows the page's own script, style and API only.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// check returns the status and reason of a refusal, or 0.
func (s *Server) check(r *http.Request) (int, string) {
	if !localapi.LoopbackHost(r.Host) {
		return http.StatusForbidden, "the Host header is not a loopback address"
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
		return http.StatusForbidden, "cross-origin requests are refused"
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if site == "cross-site" {
		return http.StatusForbidden, "cross-site requests are refused"
	}
	if safeMethod(r.Method) {
		return 0, ""
	}
	if site != "" && site != "same-origin" {
		return http.StatusForbidden, "changes are accepted from the page itself only"
	}
	if !jsonContent(r.Header.Get("Content-Type")) {
		return http.StatusUnsupportedMediaType, "a change must be sent as Content-Type: application/json"
	}
	return 0, ""
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

func jsonContent(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// refuse answers with the API's error shape on API paths, plain text
// elsewhere (a person reads it in the browser).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status != http.StatusNotFound {
		s.log.Warn("web request refused", "status", status, "reason", msg, "method", r.Method)
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		code := apitype.CodeUnauthorized
		switch status {
		case http.StatusNotFound:
			code = apitype.CodeNotFound
		case http.StatusUnsupportedMediaType, http.StatusMethodNotAllowed:
			code = apitype.CodeBadRequest
		}
		json.NewEncoder(w).Encode(apitype.Error{Err: apitype.ErrorBody{Code: code, Message: "refused: " + msg}})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte("Plexus: " + msg + "\n"))
}

// sameOrigin reports whether an Origin is the page's own address.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, host) && localapi.LoopbackHost(u.Host)
}

// noStore makes every API answer uncacheable, the event stream included
// (whose handler sets no-cache), and keeps streaming working.
type noStore struct{ http.ResponseWriter }

func (w noStore) WriteHeader(code int) {
	w.Header().Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(code)
}

func (w noStore) Write(b []byte) (int, error) {
	w.Header().Set("Cache-Control", "no-store")
	return w.ResponseWriter.Write(b)
}

func (w noStore) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w noStore) Unwrap() http.ResponseWriter { return w.ResponseWriter }
