package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// ErrNeedsLogin marks an operation that cannot go on until a person logs in.
var ErrNeedsLogin = errors.New("needs login")

// NeedsLoginError is a request to a server that was not sent, or was
// refused, because its login is over (no token, a refused token whose
// refresh failed too): no login can happen without a person. The request
// had no effect at the server. It wraps ErrNeedsLogin.
type NeedsLoginError struct {
	Server string // the server's name (never a member's account)
	Reason string
}

func (e *NeedsLoginError) Error() string {
	return e.Server + " needs an OAuth login (" + e.Reason + "): run `plexus login " + e.Server + "`"
}

func (e *NeedsLoginError) Unwrap() error { return ErrNeedsLogin }

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
	// document, if one is hosted; empty skips that identity. A login's
	// LoginParams.MetadataDocumentURL overrides it.
	MetadataDocumentURL string
	// RefreshBefore is how long before expiry a token is refreshed, at
	// most (a token that lives less is refreshed halfway); default 60 s.
	RefreshBefore time.Duration
	// LoginTTL bounds how long a login waits for its redirect; default 10 min.
	LoginTTL time.Duration
	Now      func() time.Time
	// NoBackgroundRefresh turns off the refresh of a token before it
	// expires when nothing uses it (tests that move the clock).
	NoBackgroundRefresh bool
	// Audit, if set, records every login, grant and logout.
	Audit *audit.Log
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
	background          bool
	audit               *audit.Log
	// id names this Manager in the refresh claims of a shared store.
	id string

	mu      sync.Mutex
	f       *file                   // guarded by mu; what oauth.json holds
	doc     docstore.Doc            // guarded by mu; oauth.json as last read or written
	servers map[string]*serverState // guarded by mu
	timers  map[string]*time.Timer  // guarded by mu; background refreshes
	closed  bool                    // guarded by mu

	wg sync.WaitGroup // login listeners and background refreshes
}

// serverState is what is known of one login beyond the store.
type serverState struct {
	// flight serialises refreshes of the login's token in this process
	// (single flight): a rotating refresh token must never be spent twice.
	// Across the daemons sharing a store, the record's claim does it.
	flight sync.Mutex

	// guarded by Manager.mu:
	needsLogin bool
	reason     string   // why a login is needed, for people
	challenge  []string // the last WWW-Authenticate headers
	want       []string // scopes a 403 insufficient_scope asked for
	login      *loginRun
	loginErr   string
	// checking: a login completed and the server is being reached with
	// its token; the login is done only once that succeeded.
	checking bool
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
		audit:               opts.Audit,
		metadataDocumentURL: opts.MetadataDocumentURL,
		refreshBefore:       opts.RefreshBefore,
		loginTTL:            opts.LoginTTL,
		now:                 opts.Now,
		background:          !opts.NoBackgroundRefresh,
		id:                  rand.Text(),
		servers:             map[string]*serverState{},
		timers:              map[string]*time.Timer{},
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.hc == nil {
		// A connection a request to the authorization server leaves idle
		// is not reused: token requests come seconds or hours apart, and
		// a server that closed an idle connection just as the next token
		// request was written on it resets it — a POST, which Go's
		// transport does not retry, and a code exchange cannot be tried
		// again (oidc-provider on Node closes idle connections after 5 s:
		// a login whose browser took longer failed "connection reset by
		// peer").
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		m.hc = &http.Client{Timeout: 30 * time.Second, Transport: tr}
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
	for account := range f.Logins {
		m.schedule(account)
	}
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

// entryFor returns a copy of account's login, or nil.
func (m *Manager) entryFor(account string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.f.Logins[account]; e != nil {
		return e.clone()
	}
	return nil
}

// Status is a server's OAuth state for people: never a token or a secret.
type Status struct {
	Known      bool // Plexus holds something for the server or it asked for a login
	NeedsLogin bool
	LoggedIn   bool
	// RefreshToken: the login holds a refresh token (or a grant gets new
	// tokens), so it outlives its access token. A login without one ends
	// at ExpiresAt.
	RefreshToken bool
	Issuer       string
	Scopes       []string
	ExpiresAt    time.Time
	// DPoP: the tokens are DPoP-bound.
	DPoP bool
	// Login is "waiting" (for the browser), "checking" (the server is
	// being reached with the new token), "failed" (LoginError says why)
	// or "".
	Login      string
	LoginError string
	// Reason says why a login is needed.
	Reason string
	// MoreScopes are scopes a server asked for (403 insufficient_scope)
	// that the login lacks: a new login asks for them (step-up).
	MoreScopes []string
}

// Status returns server's state.
func (m *Manager) Status(server string) Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s Status
	if e := m.f.Logins[server]; e != nil {
		s.Known = true
		s.Issuer = e.Issuer
		s.Scopes = slices.Clone(e.Scopes)
		if e.Token != nil {
			s.LoggedIn = true
			s.ExpiresAt = e.Token.Expiry
			s.RefreshToken = e.Token.Refresh != "" || e.Grant != ""
			s.DPoP = e.Token.Type == "DPoP"
		}
	}
	if st := m.servers[server]; st != nil {
		s.NeedsLogin, s.Reason = st.needsLogin, st.reason
		s.MoreScopes = slices.Clone(st.want)
		if st.needsLogin {
			s.Known, s.LoggedIn = true, false
		}
		if len(st.want) > 0 {
			s.Known = true
		}
		if st.grant != nil {
			s.RefreshToken = s.LoggedIn
		}
		switch {
		case st.login != nil:
			s.Known, s.Login = true, "waiting"
		case st.checking:
			s.Known, s.Login = true, "checking"
		case st.loginErr != "":
			s.Known, s.Login, s.LoginError = true, "failed", st.loginErr
		}
	}
	return s
}

// markNeedsLogin records that server cannot be used until a person logs in.
func (m *Manager) markNeedsLogin(server, reason string, challenge []string) {
	m.mu.Lock()
	st := m.stateLocked(server)
	was := st.needsLogin && st.reason == reason
	st.needsLogin, st.reason = true, reason
	if challenge != nil {
		st.challenge = challenge
	}
	m.mu.Unlock()
	if !was {
		m.log.Warn("server needs an OAuth login", "server", server, "reason", reason)
		m.changed(server)
	}
}

// wantScopes records scopes a server asked for with a 403
// insufficient_scope: the server still serves what the login allows, and
// the next login asks for them too.
func (m *Manager) wantScopes(server string, challenge, scopes []string) {
	m.mu.Lock()
	st := m.stateLocked(server)
	before := len(st.want)
	st.want = union(st.want, scopes)
	st.challenge = challenge
	more := len(st.want) > before
	m.mu.Unlock()
	if more {
		m.log.Warn("server wants more OAuth scopes", "server", server, "scopes", scopes)
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

// NeedsLoginReason is why server needs a login ("" if it does not).
func (m *Manager) NeedsLoginReason(server string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.servers[server]; st != nil && st.needsLogin {
		return st.reason
	}
	return ""
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

// store saves e (with its tokens) as its account's login, replacing what
// the account held, and clears the login state.
func (m *Manager) store(e *entry) error {
	_, others, err := m.change(e.Server, func(*entry) (*entry, bool) { return e, true })
	m.mu.Lock()
	st := m.stateLocked(e.Server)
	if err == nil {
		st.needsLogin, st.reason, st.want, st.challenge = false, "", nil, nil
	}
	m.mu.Unlock()
	m.announce(append(others, e.Server))
	return err
}

// Logout forgets server's tokens and client registration, and ends a login
// in progress (R-AUTH-2).
func (m *Manager) Logout(server string) error {
	_, others, err := m.change(server, func(cur *entry) (*entry, bool) { return nil, cur != nil })
	m.mu.Lock()
	st := m.servers[server]
	delete(m.servers, server)
	m.mu.Unlock()
	if st != nil && st.login != nil {
		st.login.stop()
	}
	m.announce(append(others, server))
	m.auditLogin(context.Background(), server, "logout", err)
	return err
}

// Forget is Logout for a deleted server, and of every team member's
// login at it.
func (m *Manager) Forget(server string) error {
	m.mu.Lock()
	var members []string
	for account := range m.f.Logins {
		if s, user := SplitAccount(account); s == server && user != "" {
			members = append(members, account)
		}
	}
	for account := range m.servers {
		if s, user := SplitAccount(account); s == server && user != "" {
			members = append(members, account)
		}
	}
	m.mu.Unlock()
	for _, account := range slices.Compact(slices.Sorted(slices.Values(members))) {
		if err := m.Logout(account); err != nil {
			return err
		}
	}
	return m.Logout(server)
}

// Close ends every login in progress and background refresh, and waits
// for their goroutines.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var runs []*loginRun
	for _, st := range m.servers {
		if st.login != nil {
			runs = append(runs, st.login)
			st.login = nil
		}
	}
	for k, t := range m.timers {
		t.Stop()
		delete(m.timers, k)
	}
	m.mu.Unlock()
	for _, r := range runs {
		r.stop()
	}
	m.wg.Wait()
}

// AccessToken returns server's access token, refreshing it first if it
// expires soon. It returns "" and no error when Plexus holds no token
// (the server then answers 401 and asks for a login), and an error
// wrapping ErrNeedsLogin when the token expired and cannot be refreshed.
// A server with a grant (SetGrant) gets its token from the grant, now if
// need be.
func (m *Manager) AccessToken(ctx context.Context, server string) (string, error) {
	c, err := m.credential(ctx, server)
	return c.access, err
}
