package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Lifetimes of login codes and sessions.
const (
	DefaultCodeTTL    = 2 * time.Minute
	DefaultSessionTTL = 12 * time.Hour
)

// Bounds on what is kept, so that no caller can grow the tables.
const (
	maxCodes    = 16
	maxSessions = 64
)

const cookieName = "plexus_session"

// pageTokenHeader carries a session's page token on every API call. A
// browser sends the session cookie to every port of 127.0.0.1 (cookies
// ignore ports), so a page or process on another loopback port can collect
// it; the page token it cannot: it reaches the page only in the fragment of
// the login redirect (never sent to any server) and is kept in the page
// origin's sessionStorage. The cookie alone is worth nothing.
const pageTokenHeader = "X-Plexus-Page-Token"

// pageTokenParam carries the page token on the event stream, which the
// browser's EventSource opens without custom headers.
const pageTokenParam = "page_token"

// session is a live session: when it expires and its page token's hash.
type session struct {
	exp   time.Time
	token [32]byte
}

var errBadCode = errors.New("this login link is not valid: it was used already or has expired; run `plexus ui` for a new one")

// sessions holds the outstanding login codes and the live sessions, by the
// SHA-256 of their value (a lookup never compares secrets byte by byte).
// Everything is in memory: a daemon restart logs every page out.
type sessions struct {
	codeTTL, sessionTTL time.Duration
	now                 func() time.Time // the clock; a fake one in tests

	mu       sync.Mutex
	codes    map[[32]byte]time.Time // guarded by mu
	sessions map[[32]byte]session   // guarded by mu
}

func newSessions(codeTTL, sessionTTL time.Duration) *sessions {
	if codeTTL <= 0 {
		codeTTL = DefaultCodeTTL
	}
	if sessionTTL <= 0 {
		sessionTTL = DefaultSessionTTL
	}
	return &sessions{codeTTL: codeTTL, sessionTTL: sessionTTL, now: time.Now,
		codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]session{}}
}

// newCode mints a single-use login code.
func (s *sessions) newCode() (string, time.Time, error) {
	v, err := randomValue()
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now()
	exp := now.Add(s.codeTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	putBounded(s.codes, now, sha256.Sum256([]byte(v)), exp, maxCodes, func(e time.Time) time.Time { return e })
	return v, exp, nil
}

// redeem uses up a login code and returns a new session's id (the
// cookie) and page token (the header).
func (s *sessions) redeem(code string) (id, token string, err error) {
	if code == "" {
		return "", "", errBadCode
	}
	k := sha256.Sum256([]byte(code))
	s.mu.Lock()
	exp, ok := s.codes[k]
	delete(s.codes, k) // used, valid or not
	s.mu.Unlock()
	if !ok || !s.now().Before(exp) {
		return "", "", errBadCode
	}
	if id, err = randomValue(); err != nil {
		return "", "", err
	}
	if token, err = randomValue(); err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	putBounded(s.sessions, now, sha256.Sum256([]byte(id)), session{exp: now.Add(s.sessionTTL), token: sha256.Sum256([]byte(token))},
		maxSessions, func(e session) time.Time { return e.exp })
	return id, token, nil
}

// valid reports whether id is a live session and token its page token.
func (s *sessions) valid(id, token string) bool {
	if id == "" || token == "" {
		return false
	}
	k := sha256.Sum256([]byte(id))
	t := sha256.Sum256([]byte(token))
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sessions[k]
	if ok && !s.now().Before(e.exp) {
		delete(s.sessions, k)
		return false
	}
	return ok && subtle.ConstantTimeCompare(e.token[:], t[:]) == 1
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sha256.Sum256([]byte(id)))
}

// putBounded adds k, first dropping expired entries and, if still full,
// the one that expires first; expiry tells when an entry expires.
func putBounded[V any](m map[[32]byte]V, now time.Time, k [32]byte, v V, limit int, expiry func(V) time.Time) {
	for key, e := range m {
		if !now.Before(expiry(e)) {
			delete(m, key)
		}
	}
	for len(m) >= limit {
		var oldest [32]byte
		var first time.Time
		for key, e := range m {
			if exp := expiry(e); first.IsZero() || exp.Before(first) {
				oldest, first = key, exp
			}
		}
		delete(m, oldest)
	}
	m[k] = v
}

// randomValue returns 256 random bits, hex-encoded.
func randomValue() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
