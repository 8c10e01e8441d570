package daemon

import (
	"fmt"
	"net"
	"net/http"
)

// T7: a replica of a team serves the face on its pod's address (docs/team.md,
// docs/security.md). The daemon listens beyond loopback only in
// team mode, where the face takes the team's access tokens and nothing
// else, and only these are served there:
//
//   - /mcp and /mcp/NAME, the face, behind the team's tokens;
//   - the RFC 9728 metadata of the protected resource, which a client
//     reads before it has a token;
//   - the OAuth callback of a member's upstream login (the member's
//     browser comes back to the face's own origin);
//   - /healthz and /readyz (health.go).
//
// Everything else — the web page and its settings, /metrics, the
// profiling endpoints — is the one machine's, behind the loopback token
// or the page's own login, and is not served on a network address at all
// (404): the daemon serves it on the default loopback address beside the
// pod's, when that is free (daemon.go), where a sidecar or kubectl
// port-forward reaches it. If the team section is removed while the daemon runs, the face
// there answers 404 too: it never falls back to the loopback token.

// isLoopback reports whether addr (host:port) names a loopback host.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--listen %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback(), nil
}

// listenHTTP listens on addr: any loopback address, or, in team mode
// only, any other. network reports the latter.
func listenHTTP(addr string, team bool) (ln net.Listener, network bool, err error) {
	loop, err := isLoopback(addr)
	if err != nil {
		return nil, false, err
	}
	if !loop && !team {
		return nil, false, fmt.Errorf("--listen %q: only a loopback address (127.0.0.1, ::1, localhost) is allowed outside team mode; "+
			"a replica of a team (a \"team\" section in extensions.json, docs/team.md) may listen on its pod's address", addr)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("listening on %s: %w (another daemon may use it: pass --listen 127.0.0.1:PORT, or --listen off)", addr, err)
	}
	return ln, !loop, nil
}

// networkMux is what a network address serves (above). team is a switch
// of its own whose fallbacks answer 404.
func networkMux(team *teamSwitch, hl *health) http.Handler {
	team.token, team.other = http.NotFoundHandler(), http.NotFoundHandler()
	mux := http.NewServeMux()
	team.handle(mux)
	hl.handle(mux)
	return mux
}
