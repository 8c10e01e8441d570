package webui

import (
	"crypto/rand"
	"crypto/sha256"
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

var errBadCode = errors.New("this login link is not valid: it was used already or has expired; run `plexus ui` for a new one")

// sessions holds the outstanding login codes and the live sessions, by the
// SHA-256 of their value (a lookup never compares secrets byte by byte).
// Everything is in memory: a daemon restart logs every page out.
type sessions struct {
	codeTTL, sessionTTL time.Duration

	mu       sync.Mutex
	codes    map[[32]byte]time.Time // guarded by mu
	sessions map[[32]byte]time.Time // guarded by mu
}

func newSessions(codeTTL, sessionTTL time.Duration) *sessions {
	if codeTTL <= 0 {
		codeTTL = DefaultCodeTTL
	}
	if sessionTTL <= 0 {
		sessionTTL = DefaultSessionTTL
	}
	return &sessions{codeTTL: codeTTL, sessionTTL: sessionTTL,
		codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]time.Time{}}
}

// newCode mints a single-use login code.
func (s *sessions) newCode() (string, time.Time, error) {
	v, err := randomValue()
	if err != nil {
		return "", time.Time{}, err
	}
	exp := time.Now().Add(s.codeTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	putBounded(s.codes, sha256.Sum256([]byte(v)), exp, maxCodes)
	return v, exp, nil
}

// redeem uses up a login code and returns a new session's id.
func (s *sessions) redeem(code string) (string, error) {
	if code == "" {
		return "", errBadCode
	}
	k := sha256.Sum256([]byte(code))
	s.mu.Lock()
	exp, ok := s.codes[k]
	delete(s.codes, k) // used, valid or not
	s.mu.Unlock()
	if !ok || !time.Now().Before(exp) {
		return "", errBadCode
	}
	id, err := randomValue()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	putBounded(s.sessions, sha256.Sum256([]byte(id)), time.Now().Add(s.sessionTTL), maxSessions)
	return id, nil
}

// valid reports whether id is a live session.
func (s *sessions) valid(id string) bool {
	if id == "" {
		return false
	}
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.sessions[k]
	if ok && !time.Now().Before(exp) {
		delete(s.sessions, k)
		return false
	}
	return ok
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, sha256.Sum256([]byte(id)))
}

// putBounded adds k, first dropping expired entries and, if still full,
// the one that expires first.
func putBounded(m map[[32]byte]time.Time, k [32]byte, exp time.Time, limit int) {
	now := time.Now()
	for key, e := range m {
		if !now.Before(e) {
			delete(m, key)
		}
	}
	for len(m) >= limit {
		var oldest [32]byte
		var first time.Time
		for key, e := range m {
			if first.IsZero() || e.Before(first) {
				oldest, first = key, e
			}
		}
		delete(m, oldest)
	}
	m[k] = exp
}

// randomValue returns 256 random bits, hex-encoded.
func randomValue() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
