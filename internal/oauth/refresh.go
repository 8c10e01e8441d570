package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Refreshing a login's token. In one daemon a mutex a login (the flight)
// lets one refresh happen at a time; the daemons of a team that share a
// store take turns through the login's record: a daemon claims the
// refresh (Refreshing, a compare-and-swap of the record), spends the
// refresh token and saves the new tokens, and the others wait for them
// instead of spending the same refresh token. A rotating authorization
// server takes a second use of a refresh token for a replay and revokes
// the whole grant (oidc-provider does), so the loser of a race must pick
// up the winner's tokens, never try its own copy.

// claimTTL bounds a claim: a daemon that died while refreshing blocks the
// others no longer than this (the token request's own timeout is 30 s).
const claimTTL = 40 * time.Second

// claimPoll is how often a daemon waiting for another's refresh reads the
// store again.
const claimPoll = 100 * time.Millisecond

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

// margin is how long before t expires it is refreshed: RefreshBefore, but
// at most half of the token's life, so that a short-lived token is not
// refreshed at every use.
func (m *Manager) margin(t *token) time.Duration {
	d := m.refreshBefore
	if !t.Obtained.IsZero() && t.Expiry.After(t.Obtained) {
		d = min(d, t.Expiry.Sub(t.Obtained)/2)
	}
	return d
}

func (m *Manager) expiring(t *token) bool {
	return !t.Expiry.IsZero() && !m.now().Add(m.margin(t)).Before(t.Expiry)
}

func (m *Manager) fresh(e *entry) bool {
	return e != nil && e.Token != nil && !m.expiring(e.Token)
}

func (m *Manager) credential(ctx context.Context, account string) (credential, error) {
	g, _ := m.grantOf(account)
	e := m.entryFor(account)
	if m.fresh(e) {
		return credentialOf(e), nil
	}
	if g == nil && (e == nil || e.Token == nil) {
		if e != nil {
			// A refresh under way may be ending the login: it forgets the
			// tokens, then marks the login needed. Its verdict first, or
			// the request goes out with no token, and its 401 reaches
			// the client as a lost connection.
			m.settled(account)
		}
		return m.noToken(account)
	}
	return m.renew(ctx, account, "")
}

// settled waits for a refresh of account's token under way to end.
func (m *Manager) settled(account string) {
	m.mu.Lock()
	st := m.stateLocked(account)
	m.mu.Unlock()
	st.flight.Lock()
	//lint:ignore SA2001 an empty critical section: only the wait matters
	st.flight.Unlock()
}

// noToken is the credential of account, which holds no token: a login
// that ended (its refresh refused) fails the request unsent, as nothing
// renews it; otherwise none, and the request goes out without a token.
func (m *Manager) noToken(account string) (credential, error) {
	if e := m.entryFor(account); e != nil && e.Token != nil {
		return credentialOf(e), nil // a login completed meanwhile
	} else if e != nil && m.NeedsLogin(account) {
		return credential{}, &NeedsLoginError{Server: serverOf(account), Reason: m.NeedsLoginReason(account)}
	}
	return credential{}, nil
}

// renew gets account a new token: from its grant, or by refreshing. With
// refused "" it refreshes only a token that expires soon; otherwise the
// server refused the access token refused, which is refreshed (once,
// whatever its expiry) unless another refresh replaced it meanwhile.
func (m *Manager) renew(ctx context.Context, account, refused string) (credential, error) {
	m.mu.Lock()
	st := m.stateLocked(account)
	m.mu.Unlock()
	st.flight.Lock()
	defer st.flight.Unlock()
	if m.docs.Shared() {
		// Another replica may have refreshed meanwhile.
		if diff, err := m.reload(); err == nil {
			m.announce(diff)
		}
	}
	e := m.entryFor(account)
	if e != nil && e.Token != nil && (refused == "" && !m.expiring(e.Token) || refused != "" && e.Token.Access != refused) {
		return credentialOf(e), nil
	}
	if g, gerr := m.grantOf(account); g != nil {
		if gerr != "" {
			return credential{}, fmt.Errorf("%s: %w: %s", account, ErrNeedsLogin, gerr)
		}
		ne, err := m.obtain(ctx, *g)
		if err != nil {
			return credential{}, fmt.Errorf("%s: %w", account, err)
		}
		return credentialOf(ne), nil
	}
	if e == nil || e.Token == nil {
		// Another request's refresh ended the login meanwhile.
		return m.noToken(account)
	}
	if e.Token.Refresh == "" {
		if refused == "" && m.now().Before(e.Token.Expiry) {
			return credentialOf(e), nil // still valid, nothing to refresh with
		}
		reason := "the access token expired and the login got no refresh token"
		if refused != "" {
			reason = "the server refused the access token and the login got no refresh token"
		}
		m.dropTokenIf(account, e.Token.Access)
		m.markNeedsLogin(account, reason, nil)
		return credential{}, &NeedsLoginError{Server: serverOf(account), Reason: reason}
	}
	if m.docs.Shared() {
		var done bool
		var c credential
		var err error
		if e, c, done, err = m.claimRefresh(ctx, account, e); done || err != nil {
			return c, err
		}
	}
	return m.refresh(ctx, e)
}

func serverOf(account string) string {
	s, _ := SplitAccount(account)
	return s
}

// claimRefresh takes the refresh of e's token for this daemon, waiting
// while another holds it. done is set when another daemon's refresh gave
// the login a new token (c), or ended it; otherwise e is the record as
// claimed, to refresh.
func (m *Manager) claimRefresh(ctx context.Context, account string, e *entry) (claimed *entry, c credential, done bool, err error) {
	old := e.Token.Refresh
	for {
		busy := false
		cur, others, err := m.change(account, func(cur *entry) (*entry, bool) {
			if cur == nil || cur.Token == nil || cur.Token.Refresh != old {
				return cur, false // refreshed (or logged out) meanwhile
			}
			if r := cur.Refreshing; r != nil && r.By != m.id && m.now().Before(r.Until) {
				busy = true
				return cur, false
			}
			cur.Refreshing = &claim{By: m.id, Until: m.now().Add(claimTTL)}
			return cur, true
		})
		m.announce(others)
		if err != nil {
			return nil, credential{}, true, fmt.Errorf("%s: claiming the token's refresh: %w", account, err)
		}
		switch {
		case cur == nil || cur.Token == nil:
			return nil, credential{}, true, &NeedsLoginError{Server: serverOf(account), Reason: "the login was ended meanwhile"}
		case cur.Token.Refresh != old:
			return nil, credentialOf(cur), true, nil
		case !busy:
			return cur, credential{}, false, nil
		}
		// Another replica refreshes: wait for its tokens.
		t := time.NewTimer(claimPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, credential{}, true, fmt.Errorf("%s: waiting for another replica's refresh of the token: %w", account, ctx.Err())
		case <-t.C:
		}
		if diff, err := m.reload(); err == nil {
			m.announce(diff)
		}
	}
}

// refresh spends e's refresh token. The caller holds the login's flight
// (and, in a shared store, its claim).
func (m *Manager) refresh(ctx context.Context, e *entry) (credential, error) {
	account := e.Server
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
			// tokens, but only if they are still the ones that failed. If
			// another replica saved new ones meanwhile, those are used.
			if cur := m.dropRefreshIf(account, e.Token.Refresh); cur != nil {
				return credentialOf(cur), nil
			}
			reason := "the authorization server refused the refresh token (" + te.Code + ")"
			m.markNeedsLogin(account, reason, nil)
			return credential{}, fmt.Errorf("%w: %w", &NeedsLoginError{Server: serverOf(account), Reason: reason}, err)
		}
		m.releaseClaim(account, e.Token.Refresh)
		return credential{}, fmt.Errorf("%s: refreshing the token: %w", account, err)
	}
	if tok.Refresh == "" {
		tok.Refresh = e.Token.Refresh // RFC 6749 §6: the old one stays valid
	}
	ne, err := m.replaceTokenIf(account, e.Token.Refresh, tok, scopes)
	if err != nil {
		return credential{}, err
	}
	if ne.Token.Access != tok.Access {
		return credentialOf(ne), nil // a login completed meanwhile: it wins
	}
	m.log.Info("OAuth token refreshed", "server", account, "expires", tok.Expiry)
	m.clearNeedsLogin(account)
	return credentialOf(ne), nil
}

// replaceTokenIf stores tok for account if the stored refresh token is
// still old (a login that completed meanwhile wins), clearing the claim,
// and returns the record as kept.
func (m *Manager) replaceTokenIf(account, old string, tok *token, scopes []string) (*entry, error) {
	kept, others, err := m.change(account, func(cur *entry) (*entry, bool) {
		if cur == nil || cur.Token == nil || cur.Token.Refresh != old {
			return cur, false
		}
		cur.Token = tok
		cur.Refreshing = nil
		if scopes != nil {
			cur.Scopes = scopes
		}
		return cur, true
	})
	m.announce(append(others, account))
	if err != nil {
		return nil, err
	}
	if kept == nil || kept.Token == nil {
		return nil, &NeedsLoginError{Server: serverOf(account), Reason: "the login was ended meanwhile"}
	}
	return kept, nil
}

// dropRefreshIf forgets account's tokens after their refresh token was
// refused, if it is still old; otherwise it returns the record with the
// tokens that replaced it.
func (m *Manager) dropRefreshIf(account, old string) *entry {
	kept := m.dropIf(account, func(t *token) bool { return t.Refresh == old })
	if kept != nil && kept.Token != nil && kept.Token.Refresh != old {
		return kept
	}
	return nil
}

// dropTokenIf forgets account's tokens if its access token is still old.
func (m *Manager) dropTokenIf(account, old string) {
	m.dropIf(account, func(t *token) bool { return t.Access == old })
}

// dropIf forgets account's tokens if still(its token) holds, and returns
// the record as kept.
func (m *Manager) dropIf(account string, still func(*token) bool) *entry {
	kept, others, err := m.change(account, func(cur *entry) (*entry, bool) {
		if cur == nil || cur.Token == nil || !still(cur.Token) {
			return cur, false
		}
		cur.Token, cur.Refreshing = nil, nil
		return cur, true
	})
	m.announce(append(others, account))
	if err != nil {
		m.log.Error("saving OAuth tokens failed", "server", account, "err", err)
	}
	return kept
}

// releaseClaim gives up this daemon's claim on account's refresh after a
// refresh that failed without ending the grant (the authorization server
// was unreachable, say).
func (m *Manager) releaseClaim(account, old string) {
	if !m.docs.Shared() {
		return
	}
	_, others, err := m.change(account, func(cur *entry) (*entry, bool) {
		if cur == nil || cur.Refreshing == nil || cur.Refreshing.By != m.id {
			return cur, false
		}
		cur.Refreshing = nil
		return cur, true
	})
	m.announce(others)
	if err != nil {
		m.log.Warn("releasing a refresh claim failed", "server", account, "err", err)
	}
}

// schedule sets the background refresh of account's token: at the start
// of its refresh margin, whether or not anything uses it, so that a login
// whose refresh token outlives an idle night (or expires if unused) is kept.
// A login without a refresh token, or a grant's (whose next token is
// obtained on use), has none.
func (m *Manager) schedule(account string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.timers[account]; t != nil {
		t.Stop()
		delete(m.timers, account)
	}
	e := m.f.Logins[account]
	if !m.background || m.closed || e == nil || e.Token == nil || e.Token.Refresh == "" || e.Token.Expiry.IsZero() || e.Grant != "" {
		return
	}
	if st := m.servers[account]; st != nil && st.needsLogin {
		return
	}
	at := e.Token.Expiry.Add(-m.margin(e.Token))
	access := e.Token.Access
	var t *time.Timer
	t = time.AfterFunc(max(at.Sub(m.now()), 0), func() {
		m.mu.Lock()
		if m.closed || m.timers[account] != t {
			m.mu.Unlock()
			return
		}
		delete(m.timers, account)
		m.wg.Add(1)
		m.mu.Unlock()
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*claimTTL)
		defer cancel()
		if cur := m.entryFor(account); cur == nil || cur.Token == nil || cur.Token.Access != access {
			return // replaced meanwhile: its own schedule is set
		}
		if _, err := m.credential(ctx, account); err != nil {
			m.log.Warn("background refresh of an OAuth token failed", "server", account, "err", err)
			m.retryLater(account, access)
		}
	})
	m.timers[account] = t
}

// retryLater tries a failed background refresh again in a while, if the
// token is still the same and still valid (the authorization server was
// down, say); a login that needs a person is not retried.
func (m *Manager) retryLater(account, access string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.f.Logins[account]
	if m.closed || m.timers[account] != nil || e == nil || e.Token == nil || e.Token.Access != access || !m.now().Before(e.Token.Expiry) {
		return
	}
	if st := m.servers[account]; st != nil && st.needsLogin {
		return
	}
	wait := min(e.Token.Expiry.Sub(m.now())/2, 30*time.Second)
	var t *time.Timer
	t = time.AfterFunc(wait, func() {
		m.mu.Lock()
		if m.closed || m.timers[account] != t {
			m.mu.Unlock()
			return
		}
		delete(m.timers, account)
		m.mu.Unlock()
		m.schedule(account)
	})
	m.timers[account] = t
}
