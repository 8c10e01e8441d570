package supervisor

import (
	"math"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
)

// Policy is a restart schedule: exponential backoff with jitter, a reset
// after a long healthy run, and a cooldown after too many failures in a row.
type Policy struct {
	Initial    time.Duration // delay before the first restart
	Multiplier float64       // growth per consecutive failure
	Max        time.Duration // cap of the delay
	Jitter     float64       // ± fraction of the delay, e.g. 0.2
	// ResetAfter: a connection that lived this long resets the failure count.
	ResetAfter time.Duration
	// MaxAttempts consecutive failures park the server for Cooldown
	// ("crash-looping"); then it is tried again.
	MaxAttempts int
	Cooldown    time.Duration
	// KeepAlive is the interval of health pings to a running server;
	// KeepAliveMisses unanswered in a row count as a lost connection.
	KeepAlive       time.Duration
	KeepAliveMisses int
}

// StdioPolicy is the schedule of local servers: 1 s doubling to 5 min,
// ±20 %, reset after 10 min healthy (Kubernetes' restart backoff), parked
// for 10 min after maxAttempts failures in a row (systemd's start limit).
func StdioPolicy(maxAttempts int) Policy {
	return Policy{
		Initial: time.Second, Multiplier: 2, Max: 5 * time.Minute, Jitter: 0.2,
		ResetAfter: 10 * time.Minute, MaxAttempts: maxAttempts, Cooldown: 10 * time.Minute,
		KeepAlive: 30 * time.Second, KeepAliveMisses: 3,
	}
}

// RemotePolicy is the schedule of remote servers: gRPC's connection
// backoff (1 s, ×1.6, ±20 %, capped at 120 s).
func RemotePolicy(maxAttempts int) Policy {
	p := StdioPolicy(maxAttempts)
	p.Multiplier, p.Max = 1.6, 120*time.Second
	return p
}

// PolicyFor returns the schedule for a server's configuration.
func PolicyFor(sc config.Server) Policy {
	n := config.DefaultMaxRestartAttempts
	if sc.MaxRestartAttempts != nil {
		n = *sc.MaxRestartAttempts
	}
	p := RemotePolicy(n)
	if sc.Type == config.TypeStdio {
		p = StdioPolicy(n)
	}
	if sc.KeepAliveMs > 0 {
		p.KeepAlive = time.Duration(sc.KeepAliveMs) * time.Millisecond
	}
	return p
}

// Delay returns the wait before restart number attempt (1 for the first
// restart after a failure), given rnd uniform in [0, 1).
func (p Policy) Delay(attempt int, rnd float64) time.Duration {
	d := float64(p.Initial) * math.Pow(p.Multiplier, float64(max(attempt-1, 0)))
	d = math.Min(d, float64(p.Max))
	d *= 1 + p.Jitter*(2*rnd-1)
	return time.Duration(d)
}
