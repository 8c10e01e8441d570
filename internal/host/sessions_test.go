package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// TestPerSessionInstances: a "per-session" server runs once per session
// (and once for the daemon's own view), a "shared" one once for all
// (R-PROTO-3); ending a session ends its instance's process group, and
// nothing else does: not an idle time, which is the shared instance's.
func TestPerSessionInstances(t *testing.T) {
	th := newTestHost(t)
	// The daemon's own instance of "own" may be idle again before a status
	// read: its PID comes from the events.
	events, unsubscribe := th.Subscribe()
	defer unsubscribe()
	th.create("own", th.example(map[string]any{"instance": "per-session", "idleStopMs": 50}))
	th.create("shared", th.example(nil))
	sharedPID, ownPID := th.readyPID("shared"), firstPID(t, events, "own")

	s1, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := th.NewSession(t.Context(), []string{"shared"})
	if err != nil {
		t.Fatal(err)
	}
	i1, i2 := s1.instances["own"], s2.instances["own"]
	if i1 == nil || i2 == nil {
		t.Fatal("a session has no instance of the per-session server")
	}
	p1, p2 := i1.Status().PID, i2.Status().PID
	if p1 == 0 || p2 == 0 || p1 == p2 || p1 == ownPID || p2 == ownPID {
		t.Fatalf("per-session PIDs %d, %d (daemon's %d): want three distinct processes", p1, p2, ownPID)
	}
	if _, ok := s1.instances["shared"]; ok {
		t.Fatal("a shared server got a per-session instance")
	}

	echo := catalog.ReadableName("own", "echo")
	for _, s := range []*Session{s1, s2} {
		res, err := s.Call(t.Context(), echo, json.RawMessage(`{"text":"mine"}`))
		if err != nil || res.IsError || resultText(res) != "mine" {
			t.Fatalf("session call: %+v %v", res, err)
		}
	}
	// Switched off for s2 only.
	if _, err := s2.Call(t.Context(), catalog.ReadableName("shared", "echo"), json.RawMessage(`{"text":"x"}`)); err == nil {
		t.Fatal("s2 called a server switched off for it")
	}
	if !slices.ContainsFunc(s1.Tools(), func(e catalog.Entry) bool { return e.Server == "shared" }) {
		t.Fatal("s1 lost the shared server")
	}
	if th.readyPID("shared") != sharedPID {
		t.Fatal("the shared server was restarted by a session")
	}

	time.Sleep(300 * time.Millisecond) // six idle times of the shared instance
	if i1.State() != "ready" || !liveInGroup(t, p1) {
		t.Fatalf("a per-session instance was stopped while its session lives: %s", i1.State())
	}
	if err := th.EndSession(s1.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "s1's instance to be gone", func() bool { return !liveInGroup(t, p1) })
	if liveInGroup(t, p2) == false {
		t.Fatal("ending s1 ended s2's instance")
	}
}

// TestServerJoinsAtEndOfTurn: a server that was left out comes back during
// a turn; the session's catalog does not change under the model until the
// turn ends, and then the session is told once (R-SES-4).
func TestServerJoinsAtEndOfTurn(t *testing.T) {
	th := newTestHost(t)
	cfg := th.st.Config()
	cfg.MCP.RetryMs = 50
	if _, err := th.st.CommitConfig(0, cfg); err != nil {
		t.Fatal(err)
	}
	th.Start(t.Context())
	th.create("here", th.example(nil))
	flag := filepath.Join(t.TempDir(), "up")
	late := mustJSON(t, map[string]any{"type": "stdio", "command": "sh",
		"args": []string{"-c", "test -f " + flag + " && exec " + th.bin + " example-server; exit 1"}})
	if _, err := th.PutServer(t.Context(), PutRequest{Name: "late", Config: late, Create: true, NoVerify: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "late to be failed", func() bool { return th.status("late").State == "failed" })

	s, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Turn("submit"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Activity during the turn probes it; it comes up for the daemon.
	waitFor(t, "late to be probed and ready", func() bool {
		s.Tools()
		time.Sleep(20 * time.Millisecond)
		return th.status("late").State == "ready"
	})
	if slices.ContainsFunc(s.Tools(), func(e catalog.Entry) bool { return e.Server == "late" }) {
		t.Fatal("a server joined the session's catalog in the middle of a turn")
	}
	select {
	case <-s.Deferred():
		t.Fatal("capabilities changed was announced during the turn")
	default:
	}
	if err := s.Turn("end"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Deferred():
	case <-time.After(30 * time.Second):
		t.Fatal("capabilities changed was not announced at the end of the turn")
	}
	if !slices.ContainsFunc(s.Tools(), func(e catalog.Entry) bool { return e.Server == "late" }) {
		t.Fatal("the server did not join at the end of the turn")
	}
	select {
	case <-s.Deferred():
		t.Fatal("capabilities changed was announced twice")
	default:
	}
}

// TestIdleSessionsReaped: a session nobody used for sessionIdle ends at
// the next activity — looked for at most once every reapEvery, not at
// every call — and a session in use stays.
func TestIdleSessionsReaped(t *testing.T) {
	th := newTestHost(t)
	idle, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	live := func(s *Session) bool { _, err := th.Session(s.ID); return err == nil }
	now := time.Now()
	th.reapIdleSessions(now) // reaps nothing, and is not due again for reapEvery
	later := now.Add(sessionIdle + time.Second)
	busy.mu.Lock()
	busy.lastUsed = later
	busy.mu.Unlock()
	th.reapIdleSessions(now.Add(reapEvery / 2))
	if !live(idle) || !live(busy) {
		t.Fatal("a session ended before either was idle for sessionIdle")
	}
	th.reapIdleSessions(later)
	if live(idle) {
		t.Error("a session idle past sessionIdle was not ended")
	}
	if !live(busy) {
		t.Error("a session in use was ended")
	}
	fresh, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// fresh is idle past sessionIdle at both times below; the first is
	// within reapEvery of the last look.
	th.reapIdleSessions(later.Add(reapEvery / 2))
	if !live(fresh) {
		t.Error("sessions were looked over again within reapEvery")
	}
	th.reapIdleSessions(later.Add(reapEvery))
	if live(fresh) {
		t.Error("a session idle past sessionIdle was not ended at the next due look")
	}
	if !live(busy) {
		t.Error("a session in use was ended")
	}
}
