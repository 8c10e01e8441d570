package e2e

import (
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestProbesOnActivity: a server left out at start is probed only on
// activity (a call or a listing) — first retryMs after it was left out, then
// at doubling intervals — never by a timer; when it joins, one "catalog"
// event ("capabilities changed") is emitted.
func TestProbesOnActivity(t *testing.T) {
	t.Parallel()
	// Long enough that a loaded, race-built run still acts inside the
	// doubled interval: the check below fails rather than being skipped.
	const retry = time.Second
	e := testenv.New(t)
	files := newFaultFiles(t)
	files.set(t)
	writeSettings(t, e, int(retry/time.Millisecond), map[string]any{
		"late": stdioServer(testenv.FaultServer(t), files.args("--crash-at", "start")...),
	})
	e.StartDaemon()
	events := watchEvents(t, e)
	st := waitState(t, e, "late", "failed", 20*time.Second)
	wantExitCode(t, st, 3)
	c := client.New(e.Home)
	activity := func() {
		t.Helper()
		if _, err := c.Tools(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	// quiet watches, without activity, that no probe starts the server.
	quiet := func(until time.Time, why string) {
		t.Helper()
		want := files.serverStarts(t)
		for time.Now().Before(until) {
			if n := files.serverStarts(t); n != want {
				t.Fatalf("%s: the server was started again (%d starts, want %d) without activity", why, n, want)
			}
			if s := statusOf(t, e, "late"); s.State != "failed" {
				t.Fatalf("%s: state %s without activity", why, s.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// probed runs activity and waits for the failed probe it causes; it
	// returns when the next probe is due (the failure time is when the
	// status took the probe's error).
	probed := func(starts int) time.Time {
		t.Helper()
		before := statusOf(t, e, "late").LastErrorAt
		activity()
		waitFor(t, 10*time.Second, "a probe", func() bool { return files.serverStarts(t) == starts })
		var at time.Time
		waitFor(t, 10*time.Second, "the probe's failure", func() bool {
			s := statusOf(t, e, "late")
			if s.LastErrorAt != nil && before != nil && s.LastErrorAt.After(*before) {
				at = *s.LastErrorAt
				return true
			}
			return false
		})
		return at
	}

	// The state is set where the start failed; the host then schedules the
	// first probe, and the status names it a moment later: retryMs after
	// the failure.
	t.Run("nextTryAt", func(t *testing.T) {
		var s apitype.ServerStatus
		waitFor(t, 5*time.Second, "nextTryAt in the failed server's status", func() bool {
			s = statusOf(t, e, "late")
			return s.NextTryAt != nil
		})
		if s.State != "failed" || s.LastErrorAt == nil {
			t.Fatalf("state %s, last error at %v", s.State, s.LastErrorAt)
		}
		if after := s.NextTryAt.Sub(*s.LastErrorAt); after < retry || after > retry+2*time.Second {
			t.Errorf("the next try is due %s after the failure, want retryMs (%s)", after, retry)
		}
	})

	// Long past the first due time, nothing happens without activity.
	quiet(time.Now().Add(3*retry), "left out at start")
	if n := files.serverStarts(t); n != 1 {
		t.Fatalf("%d starts, want 1", n)
	}

	// Activity probes (the fault is still there); the next probe is due
	// 2×retry after this one failed, and activity before that probes nothing.
	failed := probed(2)
	left := time.Until(failed.Add(2 * retry))
	if left < 150*time.Millisecond {
		t.Fatalf("the probe's failure was seen %s before the next probe was due: too slow to check activity inside the interval", left)
	}
	activity()
	quiet(time.Now().Add(100*time.Millisecond), "activity inside the doubled interval")
	time.Sleep(time.Until(failed.Add(2*retry + 50*time.Millisecond)))
	failed = probed(3)

	// The fault is gone, but without activity the server stays out, also
	// past the next due time (4×retry after the last failed probe).
	files.clear(t)
	quiet(failed.Add(4*retry+2*retry), "fault gone")
	if n := events.count(func(ev apitype.Event) bool { return ev.Type == apitype.EventCatalog }); n != 0 {
		t.Fatalf("%d catalog events before the server joined", n)
	}

	// A listing is activity: the server joins, and agents hear of it once.
	e.MustRun("tools")
	st = waitState(t, e, "late", "ready", 10*time.Second)
	if n := files.serverStarts(t); n != 4 {
		t.Errorf("%d starts, want 4", n)
	}
	joined := events.wait(t, 5*time.Second, "catalog", func(ev apitype.Event) bool { return ev.Type == apitype.EventCatalog })
	// A listing read after the catalog event is as new as it, by its
	// number, and has the server's tools (apitype.ToolList.EventSeq).
	list, err := client.New(e.Home).Tools(t.Context(), "late")
	if err != nil {
		t.Fatal(err)
	}
	if list.EventSeq < joined.Seq || len(list.Tools) == 0 {
		t.Errorf("a listing read after the catalog event %d is as of event %d, with %d tools", joined.Seq, list.EventSeq, len(list.Tools))
	}
	work := toolOf(t, e, "late", "work") // more activity: must not probe or announce again
	mustWork(t, e, work, "joined")
	time.Sleep(2 * retry)
	if n := events.count(func(ev apitype.Event) bool { return ev.Type == apitype.EventCatalog }); n != 1 {
		t.Errorf("%d catalog events, want exactly 1", n)
	}
	if n := files.serverStarts(t); n != 4 || statusOf(t, e, "late").PID != st.PID {
		t.Errorf("the joined server was started again (%d starts)", n)
	}
	noStrays(t, files, st.PID, 10*time.Second)
}
