package cli

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgressAfter checks when the progress line of long work shows, on
// a fake clock: not for work quicker than the delay, once for work that
// outlasts it, and at once (before the work ends, every time) with no
// delay.
func TestProgressAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		work  time.Duration
		want  bool
	}{
		{"quick work is quiet", time.Second, 999 * time.Millisecond, false},
		{"long work says so", time.Second, 1001 * time.Millisecond, true},
		{"no delay speaks at once", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(d time.Duration) { progressDelay = d }(progressDelay)
			progressDelay = tc.delay
			// Many rounds: a line that shows only when a goroutine wins a
			// race against stop would miss some of them.
			for range 200 {
				synctest.Test(t, func(t *testing.T) {
					var errOut bytes.Buffer
					a := &app{env: Env{Stderr: &errOut}}
					stop := a.progressAfter("working on %s…", "x")
					time.Sleep(tc.work)
					stop()
					got := errOut.String()
					if (got != "") != tc.want || tc.want && strings.Count(got, "working on x…\n") != 1 {
						t.Fatalf("stderr %q after %s of work with delay %s, want a line: %v", got, tc.work, tc.delay, tc.want)
					}
				})
			}
		})
	}
}
