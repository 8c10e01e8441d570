package teamauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// A token is checked once: its signature costs about a tenth of a
// millisecond, and a client sends the same token with every request until
// it expires. What a checked token said is kept by the token's SHA-256 for
// at most cacheTTL, and never past the token's own exp.
const (
	cacheTTL     = time.Minute
	cacheEntries = 4096
)

type checked struct {
	v     verified
	until time.Time
}

// tokenCache is the checked tokens; it forgets them all when full, which a
// team's tokens of one minute do not fill.
type tokenCache struct {
	mu sync.Mutex
	m  map[[32]byte]checked // guarded by mu
}

func (c *tokenCache) get(raw string, now time.Time) (verified, bool) {
	k := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.until) {
		return verified{}, false
	}
	return e.v, true
}

func (c *tokenCache) put(raw string, v verified, now time.Time, skew time.Duration) {
	until := now.Add(cacheTTL)
	if exp := v.exp.Add(skew); exp.Before(until) {
		until = exp
	}
	k := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cacheEntries {
		c.m = make(map[[32]byte]checked, 64)
	}
	c.m[k] = checked{v: v, until: until}
}
