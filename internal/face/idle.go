package face

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A protocol session ends after mcp.face.sessionIdleMs without its client:
// no request on it, and no stream of it open. The face decides that, not
// the SDK's handler, because the SDK counts only the POSTs it serves
// itself: the calls forwarded as frames and a standalone GET stream held
// open (as Claude Code, VS Code and the TypeScript SDK's client hold one
// for the server's notifications) went unseen, so a client calling tools
// all day lost its session after the idle time, counted from its last
// request of another kind.

// idleClock is one session's idle timer. Requests only record when they
// start and end (sessionStreams.last); the timer looks when it fires, and
// sets itself again for as long as the session has not been idle for the
// whole time.
type idleClock struct {
	mu    sync.Mutex
	timer *time.Timer // nil once stopped
}

// watchIdle ends session ss of the profile once it has been idle for
// idle, and returns what stops watching (the session ended otherwise).
func (p *profile) watchIdle(ss *mcp.ServerSession, s *sessionStreams, idle time.Duration) (stop func()) {
	c := &idleClock{}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = time.AfterFunc(idle, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.timer == nil {
			return
		}
		next := idle
		if s.open.Load() == 0 && s.busy.Load() == 0 {
			quiet := time.Since(time.Unix(0, s.last.Load()))
			if quiet >= idle {
				c.timer = nil
				p.f.log.Info("face: a session ended: it was idle for "+idle.String(), "profile", p.name)
				go ss.Close()
				return
			}
			next = idle - quiet
		}
		c.timer.Reset(next)
	})
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.timer != nil {
			c.timer.Stop()
			c.timer = nil
		}
	}
}
