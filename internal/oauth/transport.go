package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

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
// A 401 to a request that carried a token is answered by refreshing the
// token and sending the request once more with the new one; only when
// that cannot be done (no refresh token, a refused one) does the server
// need a login, and the request fails with a *NeedsLoginError: the server
// did not act on it. A DPoP-bound token refused with a Bearer challenge and no
// DPoP one (a server that takes only bearer tokens) makes the login use
// bearer tokens from then on. A 401 to a request without a token
// marks the server as needing a login (if it offers one, see
// ConfiguredTransport) and is passed on; a 403 insufficient_scope
// remembers the scope asked for.
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
	// passRefusals passes on the 401 that no refresh mended, rather than
	// fail the request: a client with an OAuth handler of its own
	// (Handler) answers it with a new login.
	passRefusals bool
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
	// A login that ended and that nothing can renew fails here, unsent
	// (credential: NeedsLoginError): a server answering 401 to it would
	// have the request counted as lost.
	cred, err := t.m.credential(req.Context(), account)
	if err == nil && cred.access == "" && account != t.server {
		err = &UserLoginError{Server: t.server, User: userOf(account)}
	}
	if err != nil {
		closeBody(req)
		return nil, t.forAccount(account, err)
	}
	return t.roundTrip(req, account, cred)
}

// forAccount turns a member's need for a login into the UserLoginError the
// host answers with a login for the member.
func (t *transport) forAccount(account string, err error) error {
	if account != t.server && errors.Is(err, ErrNeedsLogin) {
		return &UserLoginError{Server: t.server, User: userOf(account)}
	}
	return err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// replay returns a copy of req that can be sent again, or nil if its body
// cannot be read again.
func replay(req *http.Request) *http.Request {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return nil
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil
		}
		again.Body = body
	}
	return again
}

// roundTrip sends req for account with cred, and reads what the answer
// says of the login.
func (t *transport) roundTrip(req *http.Request, account string, cred credential) (*http.Response, error) {
	again := replay(req)
	resp, err := t.sendNonce(req, account, cred)
	if err != nil {
		return resp, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		if cred.access == "" {
			t.unauthorized(req, resp, account)
			return resp, nil
		}
		return t.refused(req.Context(), again, resp, account, cred)
	case http.StatusForbidden:
		ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
		if ch.err == "insufficient_scope" {
			t.m.wantScopes(account, resp.Header.Values("WWW-Authenticate"), ch.scope)
		}
	default:
		if resp.StatusCode < 300 && cred.access != "" {
			t.m.clearNeedsLogin(account) // the server takes what Plexus sends
		}
	}
	return resp, nil
}

// unauthorized reads a 401 to a request that carried no token.
func (t *transport) unauthorized(req *http.Request, resp *http.Response, account string) {
	if !t.configured && !offersLogin(req.Context(), t.base, t.resource, parseChallenge(resp.Header.Values("WWW-Authenticate"))) {
		// No OAuth on offer: the credential Plexus sent (or did not
		// send) was refused. The connect error says so.
		return
	}
	t.m.markNeedsLogin(account, "the server requires an OAuth login", resp.Header.Values("WWW-Authenticate"))
}

// refused handles a 401 to a request that carried cred: the token is
// renewed (refreshed, or taken from a refresh made meanwhile) and the
// request sent again with it, once. A server that refuses a DPoP-bound
// token with a Bearer challenge and no DPoP one takes bearer tokens only:
// the login's tokens are bearer tokens from then on.
func (t *transport) refused(ctx context.Context, again *http.Request, resp *http.Response, account string, cred credential) (*http.Response, error) {
	ch := parseChallenge(resp.Header.Values("WWW-Authenticate"))
	if cred.dpopKey != "" && ch.bearer && !ch.dpop {
		t.m.refuseDPoP(account)
	}
	challenge := resp.Header.Values("WWW-Authenticate")
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if again == nil {
		ctx = context.WithoutCancel(ctx)
	}
	next, err := t.m.renew(ctx, account, cred.access)
	if err == nil && next.access == "" {
		err = &NeedsLoginError{Server: t.server, Reason: "the server refused the access token and there is none to replace it"}
	}
	if err != nil && t.passRefusals {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	if err != nil {
		if !errors.Is(err, ErrNeedsLogin) {
			err = fmt.Errorf("the server refused the access token, and renewing it failed: %w", err)
		}
		return nil, t.forAccount(account, err)
	}
	if again == nil {
		return nil, errors.New("the server refused the access token; it was renewed, but the request could not be sent again")
	}
	resp, err = t.sendNonce(again, account, next)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || t.passRefusals {
		if err == nil && resp.StatusCode < 300 {
			t.m.clearNeedsLogin(account)
		}
		return resp, err
	}
	// A token renewed a moment ago is refused too: no refresh mends that.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	reason := "the server refused a freshly renewed access token"
	t.m.dropTokenIf(account, next.access)
	t.m.markNeedsLogin(account, reason, challenge)
	return nil, t.forAccount(account, &NeedsLoginError{Server: t.server, Reason: reason})
}

// sendNonce sends req with cred, and once more with the server's DPoP
// nonce if it asks for one (RFC 9449 §9: 401 use_dpop_nonce).
func (t *transport) sendNonce(req *http.Request, account string, cred credential) (*http.Response, error) {
	again := (*http.Request)(nil)
	if cred.dpopKey != "" {
		again = replay(req)
	}
	resp, err := t.send(req, account, cred)
	if err != nil || cred.dpopKey == "" {
		return resp, err
	}
	t.m.keepNonce(account, false, resp.Header.Values("DPoP-Nonce"))
	if resp.StatusCode != http.StatusUnauthorized || parseChallenge(resp.Header.Values("WWW-Authenticate")).err != "use_dpop_nonce" || again == nil {
		return resp, nil
	}
	if _, ok := parseNonce(resp.Header.Values("DPoP-Nonce")); !ok {
		return resp, nil
	}
	resp.Body.Close()
	if resp, err = t.send(again, account, cred); err != nil {
		return resp, err
	}
	t.m.keepNonce(account, false, resp.Header.Values("DPoP-Nonce"))
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
			closeBody(req)
			return nil, err
		}
		req.Header.Set("Authorization", "DPoP "+cred.access)
		req.Header.Set("DPoP", proof)
	default:
		req.Header.Set("Authorization", "Bearer "+cred.access)
	}
	return t.base.RoundTrip(req)
}

// refuseDPoP records that account's server refused a DPoP-bound token
// while taking bearer ones: its next token is requested without a proof.
func (m *Manager) refuseDPoP(account string) {
	_, others, err := m.change(account, func(cur *entry) (*entry, bool) {
		if cur == nil || cur.DPoPRefused {
			return cur, false
		}
		cur.DPoPRefused = true
		return cur, true
	})
	m.announce(others)
	if err == nil {
		m.log.Warn("the server refused a DPoP-bound token: its tokens are bearer tokens from now on", "server", account)
	}
}
