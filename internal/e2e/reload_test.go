package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestReloadTransaction edits extensions.json by hand and runs `plexus
// reload`: a good new server loads and a bad one is left out with its
// reason while the running servers keep serving, also during the reload;
// a file that does not decode changes nothing and the error names the
// problem; unchanged servers are never restarted.
func TestReloadTransaction(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	fs := testenv.FaultServer(t)
	good := newFaultFiles(t)
	off := func(sc map[string]any) map[string]any { sc["enabled"] = false; return sc }
	// good and bad are in the file from the first start, switched off: a
	// server new to a hand-edited file waits for a person's approval
	// (pinning, R-CAT-6), and this test is about the reload itself.
	writeSettings(t, e, 0, map[string]any{
		"example": stdioServer(e.Bin, "example-server"),
		"good":    off(stdioServer(fs, good.args()...)),
		"bad":     off(stdioServer(fs, "--hang-at", "handshake")), // no fault file: always hangs
	})
	e.StartDaemon()
	example := waitState(t, e, "example", "ready", 20*time.Second)
	other := keepCalling(t, e, toolOf(t, e, "example", "echo"))

	cfg := readSettings(t, e)
	srvs := cfg["mcp"].(map[string]any)["servers"].(map[string]any)
	for _, name := range []string{"good", "bad"} {
		delete(srvs[name].(map[string]any), "enabled")
	}
	srvs["bad"].(map[string]any)["startupTimeoutMs"] = 1000
	writeJSON(t, e, cfg)

	start := time.Now()
	out := e.MustRun("reload")
	end := time.Now()
	mustContain(t, "reload", out, "reloaded")
	list := servers(t, e)
	if st := list["good"]; st.State != "ready" || st.Tools != 2 {
		t.Errorf("good after reload: %+v", st)
	}
	if st := list["bad"]; st.State != "failed" || !strings.Contains(st.LastError, "startup timeout") {
		t.Errorf("bad after reload: state %s, lastError %q", st.State, st.LastError)
	}
	if st := list["example"]; st.State != "ready" || st.PID != example.PID {
		t.Errorf("the unchanged example server was restarted: %+v", st)
	}
	// The reload waited out bad's startup timeout; meanwhile calls went on.
	if n := other.between(start, end.Add(-100*time.Millisecond)); n < 3 {
		t.Errorf("only %d calls answered during a %s reload", n, end.Sub(start).Round(time.Millisecond))
	}
	work := toolOf(t, e, "good", "work")
	mustWork(t, e, work, "loaded")
	goodCalls := keepCalling(t, e, toolOf(t, e, "good", "echo"))
	pids := map[string]int{"example": example.PID, "good": list["good"].PID}

	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"malformed", `{"mcp": {"servers": {"good": {"type": "stdio",, }}}}`, []string{"line 1"}},
		{"truncated", `{"mcp": {"servers": {`, []string{"line 1", "end of input"}},
		{"unknown key", `{"mcp": {"servers": {"good": {"type": "stdio", "command": "x", "colour": "red"}}}}`, []string{"mcp.servers.good.colour"}},
		{"every problem", `{"mcp": {"retryMs": "soon", "servers": {"bad name": {"type": "stdio", "command": "x"}}}}`, []string{"mcp.retryMs", "bad name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustWork(t, e, work, "before")
			writeRaw(t, e, tc.file)
			r := e.Run("", "reload")
			if r.Code == 0 {
				t.Fatalf("reload of a bad file succeeded: %s", r.Stdout)
			}
			t.Logf("plexus reload: exit %d: %s", r.Code, r.Stderr)
			for _, w := range tc.want {
				mustContain(t, "reload error", r.Stderr, w)
			}
			mustWork(t, e, work, "after")
			list := servers(t, e)
			for name, pid := range pids {
				if st := list[name]; st.State != "ready" || st.PID != pid {
					t.Errorf("%s after a refused reload: %+v", name, st)
				}
			}
			if _, ok := list["bad"]; !ok {
				t.Error("a refused reload removed bad")
			}
		})
	}

	// A good file again, without bad: only bad goes.
	delete(srvs, "bad")
	writeJSON(t, e, cfg)
	e.MustRun("reload")
	list = servers(t, e)
	if _, ok := list["bad"]; ok {
		t.Error("bad still listed after it was removed from the file")
	}
	for name, pid := range pids {
		if st := list[name]; st.State != "ready" || st.PID != pid {
			t.Errorf("%s was restarted by a reload that did not change it: %+v", name, st)
		}
	}
	mustWork(t, e, work, "kept")
	other.check(t)
	goodCalls.check(t)
}
