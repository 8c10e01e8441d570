package policy

import (
	"strconv"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Limiter counts the calls of each client against the rate limits by the
// generic cell rate algorithm: a limit of N calls per window lets a call
// through every window/N on average, and up to N at once after a quiet
// window — a token bucket, kept as one time per client so that waits are
// exact. It outlives a reload of the settings: a limit that is kept keeps
// its counts (its identity is its content, not its place).
type Limiter struct {
	mu      sync.Mutex // guards buckets
	buckets map[bucketKey]*bucket
}

// bucketKey is one client's count against one limit (by its identity).
type bucketKey struct{ limit, client string }

// bucket is one client's count against one limit: tat is when its
// bucket would be full again (the theoretical arrival time).
type bucket struct {
	tat time.Time
}

// maxBuckets bounds the counters: past it, those that are full again (a
// client quiet for a whole window) are dropped.
const maxBuckets = 4096

// Refusal is a call over a limit: which, and when a call would be allowed.
type Refusal struct {
	Limit      string // its key path ("mcp.policy.limits[0]")
	Calls      int
	Window     time.Duration
	RetryAfter time.Duration
}

// Take counts c against every limit of p that matches it, at now; nil
// if it is within them all, else the refusal with the longest wait (and
// nothing is counted).
func (l *Limiter) Take(p *Policy, c Call, now time.Time) *Refusal {
	if !p.HasLimits() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[bucketKey]*bucket{}
	}
	type take struct {
		b   *bucket
		tat time.Time
	}
	var hit []take
	var worst *Refusal
	for i, lim := range p.limits {
		if !matches(lim.Tool, c.Tool) || !matches(lim.Client, c.Client) {
			continue
		}
		window := time.Duration(lim.WindowMs) * time.Millisecond
		per := window / time.Duration(lim.Calls)
		key := bucketKey{p.keys[i], c.Client}
		b := l.buckets[key]
		if b == nil {
			l.prune(now)
			b = &bucket{tat: now}
			l.buckets[key] = b
		}
		tat := b.tat
		if tat.Before(now) {
			tat = now
		}
		if over := tat.Sub(now) - (window - per); over > 0 {
			if worst == nil || over > worst.RetryAfter {
				worst = &Refusal{Limit: p.paths[i], Calls: lim.Calls, Window: window, RetryAfter: over}
			}
			continue
		}
		hit = append(hit, take{b, tat.Add(per)})
	}
	if worst != nil {
		return worst
	}
	for _, h := range hit {
		h.b.tat = h.tat
	}
	return nil
}

// prune drops the buckets of clients idle long enough to be full again,
// when there are too many. Locked.
func (l *Limiter) prune(now time.Time) {
	if len(l.buckets) < maxBuckets {
		return
	}
	for k, b := range l.buckets {
		if !b.tat.After(now) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxBuckets {
		clear(l.buckets) // a flood of client names: start every count afresh rather than grow
	}
}

// limitKey is a limit's identity: its content.
func limitKey(l config.RateLimit) string {
	return l.Tool + "\x00" + l.Client + "\x00" + strconv.Itoa(l.Calls) + "\x00" + strconv.Itoa(l.WindowMs)
}
