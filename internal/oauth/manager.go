package oauth

import (
	"context"
	"errors"
	"fmt"
	"github.com/plexus-mcp/plexus/internal/docstore"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// ErrNeedsLogin marks an operation that cannot go on until a person logs in.
var ErrNeedsLogin = errors.New("needs login")

// Options configure a Manager.
type Options struct {
	// Home is the directory of oauth.json, when Docs is nil.
	Home string
	// Docs is where oauth.json is kept; default: files under Home.
	Docs   docstore.Backend
	Logger *slog.Logger
	// HTTPClient reaches the metadata, registration and token endpoints;
	// default: a plain client with a 30 s timeout.
	HTTPClient *http.Client
	// OnChange is told (without locks held) that a server's Status changed.
	OnChange func(server string)
	// MetadataDocumentURL is the https URL of Plexus's client ID metadata
	// document, if one is hosted; empty skips that identity.
	MetadataDocumentURL string
	// RefreshBefore is how long before expiry a token is refreshed;
	// default 60 s.
	RefreshBefore time.Duration
	// LoginTTL bounds how long a login waits for its redirect; default 10 min.
	LoginTTL time.Duration
	Now      func() time.Time
}

// Manager holds the logins of every server: the token store, the refreshes
// and the logins in progress. It is safe for concurrent use.
type Manager struct {
	docs                docstore.Backend
	log                 *slog.Logger
	hc                  *http.Client
	onChange            func(string)
	metadataDocumentURL string
	refreshBefore       time.Duration
	loginTTL            time.Duration
	now                 func() time.Time

	mu      sync.Mutex
	f       *file                   // guarded by mu; what oauth.json holds
	doc     docstore.Doc            // guarded by mu; oauth.json as last read or written
	servers map[string]*serverState // guarded by mu

	wg sync.WaitGroup // login listeners
}

// serverState is what is known of one server beyond the store.
type serverState struct {
	// flight serialises refreshes of the server's token (single flight):
	// a rotating refresh token must never be spent twice.
	flight sync.Mutex

	// guarded by Manager.mu:
	needsLogin bool
	reason     string   // why a login is needed, for people
	challenge  []string // the last WWW-Authenticate headers
	want       []string // scopes a 403 insufficient_scope asked for
	login      *loginRun
	loginErr   string
	// The latest DPoP nonces of the authorization server and the MCP
	// server (RFC 9449 §8, §9).
	asNonce, rsNonce string
	// grant is how the daemon obtains tokens without a person, if it does;
	// grantErr why the last attempt was refused (then none is tried again
	// until the next login or configuration).
	grant    *LoginParams
	grantErr string
}

// Open loads oauth.json from opts.Home. A file that cannot be read is an
// error: the daemon does not start over tokens it cannot read.
func Open(opts Options) (*Manager, error) {
	m := &Manager{
		docs:                opts.Docs,
		log:                 opts.Logger,
		hc:                  opts.HTTPClient,
		onChange:            opts.OnChange,
		metadataDocumentURL: opts.MetadataDocumentURL,
		refreshBefore:       opts.RefreshBefore,
		loginTTL:            opts.LoginTTL,
		now:                 opts.Now,
		servers:             map[string]*serverState{},
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.hc == nil {
		m.hc = &http.Client{Timeout: 30 * time.Second}
	}
	if m.onChange == nil {
		m.onChange = func(string) {}
	}
	if m.refreshBefore == 0 {
		m.refreshBefore = time.Minute
	}
	if m.loginTTL == 0 {
		m.loginTTL = 10 * time.Minute
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.docs == nil {
		m.docs = docstore.Files{Home: opts.Home}
	}
	f, d, err := loadDoc(m.docs)
	if err != nil {
		return nil, err
	}
	m.f, m.doc = f, d
	return m, nil
}

// SetOnChange sets the change callback (the host sets it after it is built).
func (m *Manager) SetOnChange(f func(server string)) {
	m.mu.Lock()
	m.onChange = f
	m.mu.Unlock()
}

func (m *Manager) changed(server string) {
	m.mu.Lock()
	f := m.onChange
	m.mu.Unlock()
	f(server)
}

// stateLocked returns the state of server, creating it. m.mu is held.
func (m *Manager) stateLocked(server string) *serverState {
	st := m.servers[server]
	if st == nil {
		st = &serverState{}
		m.servers[server] = st
	}
	return st
}

// entryFor returns a copy of server's entry, or nil.
func (m *Manager) entryFor(server string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, e := m.f.byServer(server); e != nil {
		return e.clone()
	}
	return nil
}

// Status is a server's OAuth state for people: never a token or a secret.
type Status struct {
	Known      bool // Plexus holds something for the server or it asked for a login
	NeedsLogin bool
	LoggedIn   bool
	Issuer     string
	Scopes     []string
	ExpiresAt  time.Time
	// Login is "waiting" or "failed" (LoginError says why) or "".
	Login      string
	LoginError string
	// Reason says why a login is needed.
	Reason string
}

// Status returns server's state.
func (m *Manager) Status(server string) Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s Status
	if _, e := m.f.byServer(server); e != nil {
		s.Known = true
		s.Issuer = e.Issuer
		s.Scopes = slices.Clone(e.Scopes)
		if e.Token != nil {
			s.LoggedIn = true
			s.ExpiresAt = e.Token.Expiry
		}
	}
	if st := m.servers[server]; st != nil {
		s.NeedsLogin, s.Reason = st.needsLogin, st.reason
		if st.needsLogin {
			s.Known, s.LoggedIn = true, false
		}
		switch {
		case st.login != nil:
			s.Known, s.Login = true, "waiting"
		case st.loginErr != "":
			s.Known, s.Login, s.LoginError = true, "failed", st.loginErr
		}
	}
	return s
}

// markNeedsLogin records that server cannot be used until a person logs in.
func (m *Manager) markNeedsLogin(server, reason string, challenge []string, want []string) {
	m.mu.Lock()
	st := m.stateLocked(server)
	was := st.needsLogin && st.reason == reason
	st.needsLogin, st.reason = true, reason
	if challenge != nil {
		st.challenge = challenge
	}
	st.want = union(st.want, want)
	m.mu.Unlock()
	if !was {
		m.log.Warn("server needs an OAuth login", "server", server, "reason", reason)
		m.changed(server)
	}
}

// NeedsLogin reports whether server waits for a person to log in.
func (m *Manager) NeedsLogin(server string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.servers[server]
	return st != nil && st.needsLogin
}

// AccessToken returns server's access token, refreshing it first if it
// expires within RefreshBefore. It returns "" and no error when Plexus holds
// no token (the server then answers 401 and asks for a login), and
// ErrNeedsLogin when the token expired and cannot be refreshed. A server
// with a grant (SetGrant) gets its token from the grant, now if need be.
func (m *Manager) AccessToken(ctx context.Context, server string) (string, error) {
	c, err := m.credential(ctx, server)
	return c.access, err
}

// credential is what a request to server carries: the access token, its
// type, and the DPoP key it is bound to.
type credential struct {
	access  string
	dpopKey string // "" for a bearer token
}

func credentialOf(e *entry) credential {
	c := credential{access: e.Token.Access}
	if e.Token.Type == "DPoP" {
		c.dpopKey = e.DPoPKey
	}
	return c
}

func (m *Manager) credential(ctx context.Context, server string) (credential, error) {
	g, _ := m.grantOf(server)
	e := m.entryFor(server)
	if e != nil && e.Token != nil && !m.expiring(e.Token) {
		return credentialOf(e), nil
	}
	if g == nil && (e == nil || e.Token == nil) {
		return credential{}, nil
	}
	m.mu.Lock()
	st := m.stateLocked(server)
	m.mu.Unlock()
	st.flight.Lock()
	defer st.flight.Unlock()
	// Another caller may have refreshed while this one waited.
	e = m.entryFor(server)
	if e != nil && e.Token != nil && !m.expiring(e.Token) {
		return credentialOf(e), nil
	}
	if g, gerr := m.grantOf(server); g != nil {
		if gerr != "" {
			return credential{}, fmt.Errorf("%s: %w: %s", server, ErrNeedsLogin, gerr)
		}
		ne, err := m.obtain(ctx, *g)
		if err != nil {
			return credential{}, fmt.Errorf("%s: %w", server, err)
		}
		return credentialOf(ne), nil
	}
	if e == nil || e.Token == nil {
		return credential{}, nil
	}
	if e.Token.Refresh == "" {
		if m.now().Before(e.Token.Expiry) {
			return credentialOf(e), nil // still valid, nothing to refresh with
		}
		m.markNeedsLogin(server, "the access token expired and there is no refresh token", nil, nil)
		return credential{}, fmt.Errorf("%s: %w: the access token expired", server, ErrNeedsLogin)
	}
	return m.refresh(ctx, e)
}

func (m *Manager) expiring(t *token) bool {
	return !t.Expiry.IsZero() && !m.now().Add(m.refreshBefore).Before(t.Expiry)
}

// refresh spends e's refresh token. The caller holds the server's flight.
func (m *Manager) refresh(ctx context.Context, e *entry) (credential, error) {
	form := map[string][]string{
		"grant_type":    {"refresh_token"},
		"refresh_token": {e.Token.Refresh},
		"resource":      {e.Resource},
	}
	tok, scopes, err := m.tokenRequest(ctx, e, form)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && (te.Code == "invalid_grant" || te.Status == http.StatusUnauthorized) {
			// The grant is gone (revoked, expired, or spent): forget the
			// tokens, but only if they are still the ones that failed.
			m.dropTokenIf(e.Server, e.Token.Refresh)
			m.markNeedsLogin(e.Server, "the refresh token was refused: "+te.Code, nil, nil)
			return credential{}, fmt.Errorf("%s: %w: refreshing the token failed: %w", e.Server, ErrNeedsLogin, err)
		}
		return credential{}, fmt.Errorf("%s: refreshing the token: %w", e.Server, err)
	}
	if tok.Refresh == "" {
		tok.Refresh = e.Token.Refresh // RFC 6749 §6: the old one stays valid
	}
	if err := m.replaceTokenIf(e.Server, e.Token.Refresh, tok, scopes); err != nil {
		return credential{}, err
	}
	m.log.Info("OAuth token refreshed", "server", e.Server, "expires", tok.Expiry)
	m.changed(e.Server)
	ne := e.clone()
	ne.Token = tok
	return credentialOf(ne), nil
}

// replaceTokenIf stores tok for server if the stored refresh token is still
// old: a login that completed meanwhile wins.
func (m *Manager) replaceTokenIf(server, old string, tok *token, scopes []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, e := m.f.byServer(server)
	if e == nil || e.Token == nil || e.Token.Refresh != old {
		return nil
	}
	e.Token = tok
	if scopes != nil {
		e.Scopes = scopes
	}
	return m.saveLocked()
}

func (m *Manager) dropTokenIf(server, old string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, e := m.f.byServer(server)
	if e == nil || e.Token == nil || e.Token.Refresh != old {
		return
	}
	e.Token = nil
	if err := m.saveLocked(); err != nil {
		m.log.Error("saving OAuth tokens failed", "server", server, "err", err)
	}
}

// store saves e (with its tokens) as server's entry, replacing any other
// entry of server, and clears the login state.
func (m *Manager) store(e *entry) error {
	m.mu.Lock()
	for k, old := range m.f.Entries {
		if old.Server == e.Server {
			delete(m.f.Entries, k)
		}
	}
	m.f.Entries[entryKey(e)] = e
	err := m.saveLocked()
	st := m.stateLocked(e.Server)
	st.needsLogin, st.reason, st.want, st.challenge = false, "", nil, nil
	m.mu.Unlock()
	return err
}

// Logout forgets server's tokens and client registration, and ends a login
// in progress (R-AUTH-2).
func (m *Manager) Logout(server string) error {
	m.mu.Lock()
	for k, e := range m.f.Entries {
		if e.Server == server {
			delete(m.f.Entries, k)
		}
	}
	err := m.saveLocked()
	st := m.servers[server]
	delete(m.servers, server)
	m.mu.Unlock()
	if st != nil && st.login != nil {
		st.login.stop()
	}
	m.changed(server)
	return err
}

// Forget is Logout for a deleted server, and of every team member's
// login at it.
func (m *Manager) Forget(server string) error {
	m.mu.Lock()
	var members []string
	for _, e := range m.f.Entries {
		if s, user := SplitAccount(e.Server); s == server && user != "" {
			members = append(members, e.Server)
		}
	}
	for account := range m.servers {
		if s, user := SplitAccount(account); s == server && user != "" {
			members = append(members, account)
		}
	}
	m.mu.Unlock()
	for _, account := range members {
		if err := m.Logout(account); err != nil {
			return err
		}
	}
	return m.Logout(server)
}
