package supervisor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// TestCrashLoopSchedule runs the restart loop of a server that never comes
// back, in a synctest bubble: restarts follow 1, 2, 4, 8, 16 s (±20 %),
// then the server is parked for the 10-minute cooldown as crash-looping,
// then tried again on the same schedule.
func TestCrashLoopSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			tries []time.Time
		)
		var s *Server
		s = New(Params{
			Name:   "loop",
			Config: config.Server{Type: config.TypeStdio, Command: "x"},
			connect: func(context.Context, upstream.Spec) (*upstream.Conn, error) {
				mu.Lock()
				defer mu.Unlock()
				tries = append(tries, time.Now())
				if len(tries) == 8 {
					go s.Stop()
				}
				return nil, errors.New("exit status 1")
			},
		})
		start := time.Now()
		done := make(chan struct{})
		go func() { s.restart(errors.New("connection lost: exit status 1")); close(done) }()

		// While parked, the status says so and when the next try is.
		time.Sleep(1*time.Second + 2*time.Second + 4*time.Second + 8*time.Second + 16*time.Second + 10*time.Second)
		synctest.Wait()
		st := s.Status()
		if st.State != StateBackoff || !st.CrashLooping || time.Until(st.NextTry) < 9*time.Minute {
			t.Fatalf("after 5 failed restarts: %+v", st)
		}
		if _, err := s.Conn(); err == nil || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Conn while parked = %v", err)
		}
		<-done

		want := []time.Duration{1, 2, 4, 8, 16, 600, 1, 2}
		prev := start
		for i, at := range tries {
			gap := at.Sub(prev)
			w := want[i] * time.Second
			lo, hi := time.Duration(float64(w)*0.8), time.Duration(float64(w)*1.2)
			if i == 5 {
				lo, hi = w, w // the cooldown has no jitter
			}
			if gap < lo || gap > hi {
				t.Errorf("try %d came %v after the previous, want %v ±20%%", i+1, gap, w)
			}
			prev = at
		}
		if len(tries) != 8 {
			t.Fatalf("%d tries, want 8", len(tries))
		}
	})
}

// TestRestartNowResetsBackoff: Restart cuts a backoff wait short.
func TestRestartNowResetsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := make(chan time.Time, 10)
		s := New(Params{
			Name:   "kick",
			Config: config.Server{Type: config.TypeStdio, Command: "x"},
			connect: func(context.Context, upstream.Spec) (*upstream.Conn, error) {
				calls <- time.Now()
				return nil, errors.New("still down")
			},
		})
		s.failures = 4 // the next wait would be ~16 s
		go s.restart(errors.New("lost"))
		synctest.Wait()
		start := time.Now()
		s.Restart()
		at := <-calls
		if at.Sub(start) != 0 {
			t.Fatalf("restart came %v after Restart, want at once", at.Sub(start))
		}
		s.Stop()
		synctest.Wait()
	})
}

func TestHealthyRunResetsFailures(t *testing.T) {
	s := New(Params{Name: "h", Config: config.Server{Type: config.TypeStdio, Command: "x"}})
	s.failures = 4
	s.noteUptime(9 * time.Minute)
	if s.failures != 4 {
		t.Fatalf("a 9-minute run reset the count")
	}
	s.noteUptime(10 * time.Minute)
	if s.failures != 0 {
		t.Fatalf("a 10-minute run did not reset the count")
	}
	if d, parked := s.nextDelay(errors.New("x")); parked || d < 800*time.Millisecond || d > 1200*time.Millisecond {
		t.Fatalf("first delay after a healthy run = %v, %v", d, parked)
	}
}

func TestExpiredRemoteSessionReinitializesAtOnce(t *testing.T) {
	s := New(Params{Name: "r", Config: config.Server{Type: config.TypeHTTP, URL: "http://127.0.0.1/mcp"}})
	cause := &upstream.StatusError{StatusCode: 404}
	if d, _ := s.nextDelay(cause); d != 0 {
		t.Fatalf("first retry after a 404 waits %v", d)
	}
	if d, _ := s.nextDelay(cause); d == 0 {
		t.Fatal("second retry after a 404 does not back off")
	}
}

func TestPolicies(t *testing.T) {
	sp := StdioPolicy(5)
	rp := RemotePolicy(5)
	for _, tc := range []struct {
		p       Policy
		attempt int
		want    time.Duration
	}{
		{sp, 1, time.Second}, {sp, 2, 2 * time.Second}, {sp, 9, 256 * time.Second}, {sp, 10, 300 * time.Second}, {sp, 30, 300 * time.Second},
		{rp, 1, time.Second}, {rp, 2, 1600 * time.Millisecond}, {rp, 3, 2560 * time.Millisecond}, {rp, 20, 120 * time.Second},
	} {
		if got := tc.p.Delay(tc.attempt, 0.5); got != tc.want {
			t.Errorf("Delay(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
		lo, hi := tc.p.Delay(tc.attempt, 0), tc.p.Delay(tc.attempt, 0.999999)
		if lo < time.Duration(float64(tc.want)*0.8)-time.Microsecond || hi > time.Duration(float64(tc.want)*1.2) {
			t.Errorf("Delay(%d) jitter range [%v, %v] is not ±20%% of %v", tc.attempt, lo, hi, tc.want)
		}
	}
	// 100 servers failing together do not all restart within 100 ms.
	var min, max time.Duration = time.Hour, 0
	for range 100 {
		d := sp.Delay(1, jitter())
		min, max = minDur(min, d), maxDur(max, d)
	}
	if max-min < 100*time.Millisecond {
		t.Errorf("100 first restarts spread over only %v", max-min)
	}
}

func minDur(a, b time.Duration) time.Duration { return min(a, b) }
func maxDur(a, b time.Duration) time.Duration { return max(a, b) }
