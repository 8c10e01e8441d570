package localapi

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/connlimit"
)

// Loopback guards the daemon's loopback TCP address (R-OWN-4): every
// request needs the token from $PLEXUS_HOME/token, and a request whose Host
// is not a loopback name, or whose Origin is present but not the daemon's
// own, is refused with 403 — the defence against DNS rebinding and
// cross-site requests from a browser. Anything that cannot be verified is
// refused.
type Loopback struct {
	token []byte
	mux   *http.ServeMux
	log   *slog.Logger
}

// NewLoopback returns the guarded handler; routes are added with Handle.
func NewLoopback(token string, log *slog.Logger) *Loopback {
	return &Loopback{token: []byte(token), mux: http.NewServeMux(), log: log}
}

// Handle adds a route behind the guard.
func (l *Loopback) Handle(pattern string, h http.Handler) { l.mux.Handle(pattern, h) }

func (l *Loopback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !LoopbackHost(r.Host) {
		l.refuse(w, http.StatusForbidden, "the Host header is not a loopback address")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
		l.refuse(w, http.StatusForbidden, "cross-origin requests are refused")
		return
	}
	if !l.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="plexus"`)
		l.refuse(w, http.StatusUnauthorized, "a token is required: send Authorization: Bearer <the content of $PLEXUS_HOME/token>")
		return
	}
	connlimit.Prove(r.Context())
	l.mux.ServeHTTP(w, r)
}

func (l *Loopback) authorized(r *http.Request) bool { return bearer(r, string(l.token)) }

func (l *Loopback) refuse(w http.ResponseWriter, status int, msg string) {
	l.log.Warn("loopback request refused", "status", status, "reason", msg)
	w.Header().Set("Connection", "close") // and nothing more is read of it
	writeError(w, status, apitype.ErrorBody{Code: apitype.CodeUnauthorized, Message: "refused: " + msg})
}

// LoopbackHost reports whether a Host header names this machine's loopback
// interface the way a client that means it writes it: exactly 127.0.0.1,
// [::1] or localhost, with or without a port. Other spellings of loopback
// (127.0.0.2, [::ffff:127.0.0.1], 2130706433) are refused: nothing of ours
// sends them, and a name that rebinds to one of them would pass a looser
// check.
func LoopbackHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
		if strings.HasPrefix(host, "[") || strings.Count(host, ":") > 0 {
			// "[::1]" without a port is the only bracketed form left.
			return host == "[::1]"
		}
	} else if !validPort(port) {
		return false
	} else if host == "::1" && !strings.HasPrefix(hostport, "[") {
		return false
	}
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// validPort reports whether p is a decimal TCP port.
func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n < 65536
}

// sameOrigin reports whether an Origin is the daemon's own address.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host) && LoopbackHost(u.Host)
}
