package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// A server's first start can be slow — `npx -y` downloads its package
// first — and a silent wait looks like a hang. While add, edit, enable or
// restart waits for a server to start, the command follows the daemon's
// events and says how long it has waited and the server's latest stderr
// line; a start that timed out says which setting to raise (R-UI-4).

// startTick is how often the wait is reported; a variable for tests.
var startTick = 2 * time.Second

// watchStart reports the start of server name until stop is called: after
// progressDelay a line saying what is happening (what, e.g. "starting docs
// to check that it works"), then every startTick the time waited and the
// latest stderr line, when there is news. On a terminal the report
// rewrites one line; elsewhere each report is a line of its own.
func (a *app) watchStart(ctx context.Context, c *client.Client, name, what string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu     sync.Mutex
		latest string
	)
	// news wakes the report at a new stderr line: a first start's
	// download shows its own lines as they come, not one per tick.
	news := make(chan struct{}, 1)
	var wg sync.WaitGroup
	if events, err := c.Events(ctx); err == nil {
		wg.Go(func() {
			defer events.Close()
			for {
				ev, err := events.Next()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					continue
				}
				if ev.Type == apitype.EventStderr && ev.Server == name {
					if line := oneLine(ev.Line); line != "" {
						mu.Lock()
						latest = line
						mu.Unlock()
						select {
						case news <- struct{}{}:
						default:
						}
					}
				}
			}
		})
	}
	tty := a.stderrIsTerminal()
	start := time.Now()
	if progressDelay <= 0 {
		// Said before the work starts, not raced against its end.
		a.progressf("%s…", what)
	}
	wg.Go(func() {
		if progressDelay > 0 {
			select {
			case <-time.After(progressDelay):
			case <-ctx.Done():
				return
			}
			a.progressf("%s…", what)
		}
		t := time.NewTicker(startTick)
		defer t.Stop()
		said, spoke := "", false
		for {
			select {
			case <-t.C:
			case <-news:
			case <-ctx.Done():
				if tty && spoke {
					fmt.Fprint(a.stderr(), "\r\x1b[K")
				}
				return
			}
			mu.Lock()
			line := latest
			mu.Unlock()
			report := fmt.Sprintf("  %s waited", time.Since(start).Round(time.Second))
			if line != "" {
				report += " · " + name + ": " + truncate(line, 100)
			}
			switch {
			case tty:
				fmt.Fprint(a.stderr(), "\r\x1b[K"+report)
				spoke = true
			case line != said || !spoke:
				fmt.Fprintln(a.stderr(), report)
				spoke = true
			}
			said = line
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// stderrIsTerminal reports whether stderr is a terminal.
func (a *app) stderrIsTerminal() bool {
	f, ok := a.env.Stderr.(*os.File)
	return ok && isTerminal(f)
}

// startTimedOut gives a start that ran out of time the setting to raise.
func startTimedOut(err error, name string, adding bool) error {
	if err == nil || !strings.Contains(err.Error(), "startup timeout (") {
		return err
	}
	remedy := "raise the server's startup timeout: plexus edit " + name + " --startup-timeout MS (the default is 30000)"
	switch {
	case strings.Contains(err.Error(), "installTimeoutMs") && adding:
		remedy = "its first start (which may download its package) ran out of time: run the same `plexus add` with --install-timeout MS (the default is 300000)"
	case strings.Contains(err.Error(), "installTimeoutMs"):
		remedy = "its first start (which may download its package) ran out of time: plexus edit " + name + " --install-timeout MS (the default is 300000)"
	case adding:
		remedy = "the server did not start in time (a first `npx -y` may download its package): run the same `plexus add` with --startup-timeout MS, e.g. --startup-timeout 120000"
	}
	return &remedyError{err: err, code: apitype.CodeConflict, remedy: remedy, overrides: true}
}
