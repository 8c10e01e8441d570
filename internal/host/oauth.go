package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/supervisor"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// usesOAuth reports whether Plexus authorizes requests to sc itself: a
// remote server with no Authorization of its own configured.
func usesOAuth(sc config.Server) bool {
	if sc.Type == config.TypeStdio || sc.BearerTokenEnvVar != "" {
		return false
	}
	for k := range sc.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return false
		}
	}
	return true
}

// authorize puts the OAuth transport under spec's HTTP client: requests to
// the server carry the login's token, never another. A server with a grant
// without a person gets it registered with its secrets resolved by get.
func (h *Host) authorize(spec *upstream.Spec, sc config.Server, get func(string) (string, error)) error {
	if h.oauth == nil || !usesOAuth(sc) {
		return nil
	}
	g, err := grantOf(sc.OAuth, get)
	if err != nil {
		return err
	}
	h.oauth.SetGrant(oauth.LoginParams{Server: spec.Name, URL: spec.URL, Grant: g, Manual: manualOf(sc.OAuth), MetadataDocumentURL: h.metadataDocumentURL()})
	spec.HTTPClient = &http.Client{Transport: h.oauth.ConfiguredTransport(spec.Name, spec.URL, upstream.NewTransport(), sc.OAuth != nil)}
	return nil
}

// manualOf is the manual endpoints of o, if it has them (a grant with
// them skips discovery).
func manualOf(o *config.OAuth) *oauth.Manual {
	if o == nil || o.AuthURL == "" || o.TokenURL == "" {
		return nil
	}
	return &oauth.Manual{ClientID: o.ClientID, AuthURL: o.AuthURL, TokenURL: o.TokenURL, Scopes: o.Scopes}
}

// authStatus is server name's OAuth state for the API, or nil for a server
// that does not use OAuth.
func (h *Host) authStatus(name string, sc config.Server) *apitype.AuthStatus {
	if h.oauth == nil || !usesOAuth(sc) {
		return nil
	}
	s := h.oauth.Status(name)
	if !s.Known && sc.OAuth == nil {
		return nil
	}
	out := &apitype.AuthStatus{NeedsLogin: s.NeedsLogin, LoggedIn: s.LoggedIn, Issuer: s.Issuer, Scopes: s.Scopes,
		Login: s.Login, LoginError: s.LoginError, Reason: s.Reason, RefreshToken: s.RefreshToken, DPoP: s.DPoP,
		MoreScopes: s.MoreScopes}
	if !s.ExpiresAt.IsZero() {
		t := s.ExpiresAt
		out.ExpiresAt = &t
	}
	return out
}

// needsLogin reports whether a failed start is a server waiting for an
// OAuth login: such a server is saved (and shown as needing a login), not
// refused.
func (h *Host) needsLogin(name string, err error) bool {
	return h.oauth != nil && (h.oauth.NeedsLogin(name) || errors.Is(err, oauth.ErrNeedsLogin))
}

// loginNeeded is the supervisor's NeedsLogin of server name: the error
// to show while it waits for a login (never the advice to configure a
// header, which a 401 of a server without OAuth gets), or nil when err is
// no matter of a login.
func (h *Host) loginNeeded(name string, sc config.Server, err error) error {
	if !usesOAuth(sc) || !h.needsLogin(name, err) {
		return nil
	}
	reason := h.oauth.NeedsLoginReason(name)
	if reason == "" {
		reason = "the server requires an OAuth login"
	}
	return &oauth.NeedsLoginError{Server: name, Reason: reason}
}

// refusedLogin is the login a call to srv waits for when the server
// refused it with HTTP 401 (the call was not processed) and srv logs in
// with OAuth; nil otherwise (a refused header credential says which to
// check in the call's error).
func (h *Host) refusedLogin(srv *supervisor.Server, err error) error {
	var se *upstream.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
		return nil
	}
	return h.loginNeeded(srv.Name(), srv.Config(), oauth.ErrNeedsLogin)
}

// loginParams resolves what a login of name needs.
func (h *Host) loginParams(name string) (oauth.LoginParams, error) {
	snap := h.snap.Load()
	srv, ok := snap.servers[name]
	if !ok {
		return oauth.LoginParams{}, &NotFoundError{What: "server", Name: name}
	}
	sc := srv.Config()
	if h.oauth == nil || !usesOAuth(sc) {
		return oauth.LoginParams{}, fmt.Errorf("%s does not use OAuth: only a remote server without its own Authorization header or bearerTokenEnvVar logs in", name)
	}
	spec, err := h.resolve(name, sc, snap.cfg, h.lookup)
	if err != nil {
		return oauth.LoginParams{}, err
	}
	p := oauth.LoginParams{Server: name, URL: spec.URL, MetadataDocumentURL: h.metadataDocumentURL()}
	if p.Grant, err = grantOf(sc.OAuth, func(v string) (string, error) {
		val, ok := h.lookup(v)
		if !ok {
			return "", &config.MissingVarError{Name: v}
		}
		return val, nil
	}); err != nil {
		return p, fmt.Errorf("server %s: oauth: %w", name, err)
	}
	if o := sc.OAuth; o != nil && p.Grant == nil {
		p.Manual = &oauth.Manual{ClientID: o.ClientID, AuthURL: o.AuthURL, TokenURL: o.TokenURL, Scopes: o.Scopes}
		if o.ClientSecret != nil {
			v, ok := h.lookup(o.ClientSecret.Env)
			if !ok {
				return p, fmt.Errorf("server %s: oauth.clientSecret: %w", name, &config.MissingVarError{Name: o.ClientSecret.Env})
			}
			p.Manual.ClientSecret = v
		}
	}
	return p, nil
}

// metadataDocumentURL is mcp.oauthClientMetadataUrl: Plexus's client ID
// metadata document, if the user hosts one.
func (h *Host) metadataDocumentURL() string {
	return h.snap.Load().cfg.MCP.OAuthClientMetadataURL
}

// Login starts an OAuth login of server name (R-AUTH-1): the daemon listens
// for the browser's redirect on 127.0.0.1; once it arrives the server is
// started again with its new token, and the login is done only once that
// start succeeded (verifyLogin).
func (h *Host) Login(ctx context.Context, name string) (*apitype.LoginStart, error) {
	p, err := h.loginParams(name)
	if err != nil {
		return nil, err
	}
	if p.Grant != nil {
		return h.grantLogin(ctx, p)
	}
	pd, err := h.oauth.StartLogin(ctx, p, func() error { return h.verifyLogin(name) })
	if err != nil {
		return nil, &LoginError{Server: name, Err: err}
	}
	return &apitype.LoginStart{Server: name, AuthURL: pd.AuthURL, RedirectURI: pd.RedirectURI, ExpiresAt: pd.Expires}, nil
}

// grantLogin obtains a token of a server with a grant without a person,
// now, forgetting an earlier refusal, and restarts the server with it.
func (h *Host) grantLogin(ctx context.Context, p oauth.LoginParams) (*apitype.LoginStart, error) {
	p.Manual = manualOf(h.snap.Load().servers[p.Server].Config().OAuth)
	h.oauth.SetGrant(p)
	if err := h.oauth.Obtain(ctx, p.Server); err != nil {
		return nil, &LoginError{Server: p.Server, Err: err}
	}
	if err := h.verifyLogin(p.Server); err != nil {
		return nil, &LoginError{Server: p.Server, Err: err}
	}
	return &apitype.LoginStart{Server: p.Server, Grant: p.Grant.Type}, nil
}

// CompleteLogin completes name's login with a pasted redirect URL: the
// tokens are stored and the server started again with them (verifyLogin).
func (h *Host) CompleteLogin(ctx context.Context, name, redirected string) error {
	if h.oauth == nil {
		return fmt.Errorf("%s does not use OAuth", name)
	}
	if err := h.oauth.CompleteLogin(ctx, name, redirected); err != nil {
		return &LoginError{Server: name, Err: err}
	}
	return nil
}

// verifyLogin starts name afresh with the tokens a login just got: the
// login is done only if the server takes them (an authenticated request
// succeeded). Its error says why not: the server refused the token (then
// it needs a login still), or it did not start for another reason.
func (h *Host) verifyLogin(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := h.Restart(ctx, name)
	var se *StartError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && h.needsLogin(name, se.Err):
		reason := h.oauth.NeedsLoginReason(name)
		if reason == "" {
			reason = "the server answered 401"
		}
		return fmt.Errorf("the server refused the token the login got (%s)", reason)
	case errors.As(err, &se):
		return fmt.Errorf("the login got its tokens, but the server did not start with them: %w", se.Err)
	}
	return fmt.Errorf("the login got its tokens, but restarting the server failed: %w", err)
}

// loginChanged follows a login's changes that the servers' state must
// follow: a server whose login ended (a refused token that no refresh
// mended) leaves "ready" for "needs-login", and one waiting for a login
// that another daemon sharing the store made (team mode) starts with it.
// A login made here starts the server itself (verifyLogin).
func (h *Host) loginChanged(account string) {
	if _, user := oauth.SplitAccount(account); user != "" || h.oauth == nil {
		return // a member's login: the server's connection is the daemon's
	}
	srv, ok := h.snap.Load().servers[account]
	if !ok || !usesOAuth(srv.Config()) {
		return
	}
	st := h.oauth.Status(account)
	switch state := srv.State(); {
	case st.NeedsLogin && state == supervisor.StateReady:
		srv.LoginNeeded(h.loginNeeded(account, srv.Config(), oauth.ErrNeedsLogin))
	case !st.NeedsLogin && st.LoggedIn && st.Login == "" && state == supervisor.StateNeedsLogin:
		h.afterLogin(account)
	}
}

// Logout forgets name's tokens and registration (R-AUTH-2) and restarts the
// server, which then asks for a login.
func (h *Host) Logout(ctx context.Context, name string) error {
	if _, err := h.loginParams(name); err != nil {
		return err
	}
	if err := h.oauth.Logout(name); err != nil {
		return err
	}
	h.afterLogin(name)
	return nil
}

// afterLogin restarts name in the background, owned by h.bg.
func (h *Host) afterLogin(name string) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		if err := h.restartAuthorized(context.Background(), name); err != nil {
			h.log.Warn("server did not start after the login changed", "server", name, "err", err)
		}
	}()
}

// restartAuthorized starts name afresh with its current login.
func (h *Host) restartAuthorized(ctx context.Context, name string) error {
	err := h.Restart(ctx, name)
	var se *StartError
	if errors.As(err, &se) && h.needsLogin(name, se.Err) {
		return nil // logged out: the status says a login is needed
	}
	return err
}

// LoginError is a login that could not start or complete; the message says
// why and never holds a token or secret.
type LoginError struct {
	Server string
	Err    error
}

func (e *LoginError) Error() string { return fmt.Sprintf("login to %s: %v", e.Server, e.Err) }
func (e *LoginError) Unwrap() error { return e.Err }
