package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// UserLoginError is a team member's call to a server at which the member
// has not logged in (or whose login ended): it was not sent, with no
// one else's token either. The host answers it with a login started for
// the member.
type UserLoginError struct {
	Server, User string
}

func (e *UserLoginError) Error() string {
	return fmt.Sprintf("%s has not logged in to %s: each team member logs in to it with their own account", e.User, e.Server)
}

func userOf(account string) string {
	_, user := SplitAccount(account)
	return user
}

// Transport returns a RoundTripper for server's MCP endpoint at resourceURL:
// requests to that origin carry the server's access token (refreshed before
// it expires), requests elsewhere carry none. Whatever Authorization header
// a request had is replaced, so no other credential — a downstream client's
// token above all — reaches the server (R-AUTH-2).
//
// A 401 marks the server as needing a login (if it offers one, see
// ConfiguredTransport) and a 403 insufficient_scope
// remembers the scope asked for; the answer is passed on unchanged: nothing
// is retried.
func (m *Manager) Transport(server, resourceURL string, base http.RoundTripper) http.RoundTripper {
	return m.ConfiguredTransport(server, resourceURL, base, false)
}

// ConfiguredTransport is Transport for a server whose OAuth settings are
// configured (configured true): its 401 always means a login. Without
// them a 401 without a token means a login only if the server offers
// OAuth (offersLogin); otherwise the server refused the credential it was
// sent, which no login can fix.
func (m *Manager) ConfiguredTransport(server, resourceURL string, base http.RoundTripper, configured bool) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &transport{m: m, server: server, base: base, resource: resourceURL, configured: configured}
	if u, err := url.Parse(resourceURL); err == nil {
		t.scheme, t.host = u.Scheme, u.Host
	}
	return t
}

type transport struct {
	m            *Manager
	server       string
	scheme, host string
	resource     string // the MCP endpoint's URL
	configured   bool   // the server has OAuth settings of its own
	base         http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	req.Header.Del("DPoP")
	if req.URL.Scheme != t.scheme || req.URL.Host != t.host {
		return t.base.RoundTrip(req)
	}
	account := t.server
	// A team member's call carries the member's own login, never the
	// daemon's nor another member's; a server with a grant has no person's
	// login, and its machine token serves everyone.
	if id, ok := caller.From(req.Context()); ok {
		if g, _ := t.m.grantOf(t.server); g == nil {
			account = Account(t.server, id.User)
		}
	}
	cred, err := t.m.credential(req.Context(), account)
	if err == nil && account != t.server && cred.access == "" {
		err = &UserLoginError{Server: t.server, User: userOf(account)}
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.roundTrip(req, account, cred)
}

// roundTrip sends req for account with cred, and reads what the answer
// says of the login.
func (t *transport) roundTrip(req *http.Request, account string, cred credential) (*http.Response, error) {
	resp, err := t.send(req, account, cred)
	if err != nil {
		return resp, err
	}
	if cred.dpopKey != "" {
		t.m.keepNonce(account, false, resp.Header.Values("DPoP-Nonce"))
		// RFC 9449 §9: a resource server that wants a nonce answers 401
		// use_dpop_nonce with one; the request goes once more with it.
		if resp.StatusCode == http.StatusUnauthorized && parseChallenge(resp.Header.Values("WWW-Authenticate")).err == "use_dpop_nonce" &&
			(req.Body == nil || req.GetBody != nil) {
			if _, ok := parseNonce(resp.Header.Values("DPoP-Nonce")); ok {
				again := req.Clone(req.Context())
				if req.GetBody != nil {
					if again.Body, err = req.GetBody(); err != nil {
						return resp, nil
					}
				}
				resp.Body.Close()
				if resp, err = t.send(again, account, cred); err != nil {
					return resp, err
				}
				t.m.keepNonce(account, false, resp.Header.Values("DPoP-Nonce"))
			}
		}
	}
	tok := cred.access
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted:
		t.m.clearNeedsLogin(account) // the server takes what Plexus sends
	case http.StatusUnauthorized:
		if tok != "" && !t.m.isCurrent(account, tok) {
			break // refreshed meanwhile: the answer is about an old token
		}
		reason := "the server requires an OAuth login"
		if tok != "" {
			reason = "the server refused Plexus's access token"
			t.m.dropRefused(account, tok)
		} else if !t.configured && !offersLogin(req.Context(), t.base, t.resource, parseChallenge(resp.Header.Values("WWW-Authenticate"))) {
			// No OAuth on offer: the credential Plexus sent (or did not
			// send) was refused. The connect error says so.
			break
		}
		t.m.markNeedsLogin(account, reason, resp.Header.Values("WWW-Authenticate"), nil)
	case http.StatusForbidden:
		ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
		if ch.err == "insufficient_scope" {
			t.m.markNeedsLogin(account, "the server needs more permissions (scope "+strings.Join(ch.scope, " ")+")",
				resp.Header.Values("WWW-Authenticate"), ch.scope)
		}
	}
	return resp, nil
}

// send puts cred on req (a bearer token, or a DPoP token with a fresh
// proof) and sends it.
func (t *transport) send(req *http.Request, account string, cred credential) (*http.Response, error) {
	switch {
	case cred.access == "":
	case cred.dpopKey != "":
		proof, err := dpopProof(cred.dpopKey, req.Method, req.URL.String(), cred.access, t.m.nonce(account, false), t.m.now())
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		req.Header.Set("Authorization", "DPoP "+cred.access)
		req.Header.Set("DPoP", proof)
	default:
		req.Header.Set("Authorization", "Bearer "+cred.access)
	}
	return t.base.RoundTrip(req)
}

// isCurrent reports whether access is the stored access token of server.
func (m *Manager) isCurrent(server, access string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, e := m.f.byServer(server)
	return e != nil && e.Token != nil && e.Token.Access == access
}

// clearNeedsLogin forgets a need for a login once the server accepts
// requests again (it answered 401 only for a while, say).
func (m *Manager) clearNeedsLogin(server string) {
	m.mu.Lock()
	st := m.servers[server]
	was := st != nil && st.needsLogin
	if was {
		st.needsLogin, st.reason = false, ""
	}
	m.mu.Unlock()
	if was {
		m.changed(server)
	}
}
