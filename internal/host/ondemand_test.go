package host

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/catcache"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestOnDemandStopsWhenIdleAndStartsOnUse: a stdio server (on demand by
// default) is started once to learn its catalog, stopped after its idle
// time with its tools still listed and its process gone, and started again
// by a call, which succeeds; a daemon started later lists it from the
// cached catalog without starting it, and its first call starts it.
func TestOnDemandStopsWhenIdleAndStartsOnUse(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	bin := testenvBinary(t)
	first := openHostAt(t, home, bin)
	th := &testHost{Host: first, t: t, bin: bin}
	// The PID from the events, not from a status read after the add: the
	// server may already be idle again by then.
	events, unsubscribe := first.Subscribe()
	defer unsubscribe()
	th.create("od", th.example(map[string]any{"idleStopMs": 300}))
	pid := firstPID(t, events, "od")
	waitFor(t, "od idle", func() bool { return th.status("od").State == apitype.StateIdle })
	waitFor(t, "the idle server's process gone", func() bool { return groupGone(pid) })
	if got := th.toolsOf("od"); len(got) == 0 {
		t.Fatal("an idle server's tools are not listed")
	}
	echo := catalog.ReadableName("od", "echo")
	res, err := th.Call(t.Context(), echo, json.RawMessage(`{"text":"awake"}`))
	if err != nil || res.IsError || resultText(res) != "awake" {
		t.Fatalf("calling the idle server: %+v, %v", res, err)
	}
	// Its first process is gone: the answer came from a new one (which
	// may be idle again already).
	first.Close()

	second := openHostAt(t, home, bin)
	defer second.Close()
	th2 := &testHost{Host: second, t: t, bin: bin}
	second.Start(t.Context())
	if st := th2.status("od"); st.State != apitype.StateIdle || st.PID != 0 {
		t.Fatalf("restarted daemon: state %q pid %d, want idle with no process", st.State, st.PID)
	}
	if got := th2.toolsOf("od"); !strings.Contains(strings.Join(got, ","), "echo") {
		t.Fatalf("restarted daemon lists %v from the cache, want echo among them", got)
	}
	if _, warnings, err := second.Tools("od"); err != nil || len(warnings) != 0 {
		t.Errorf("tools of a server waiting idle: warnings %q, %v; want none (it is not a failure)", warnings, err)
	}
	res, err = th2.Call(t.Context(), echo, json.RawMessage(`{"text":"again"}`))
	if err != nil || res.IsError || resultText(res) != "again" {
		t.Fatalf("first call after the restart: %+v, %v", res, err)
	}
}

// TestCorruptCatalogCacheStartsAfresh: a catalog cache that does not
// decode, or that lists a tool never pinned, is a log line and a start of
// the server as if there were none — never a crash, never that tool.
func TestCorruptCatalogCacheStartsAfresh(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	bin := testenvBinary(t)
	first := openHostAt(t, home, bin)
	th := &testHost{Host: first, t: t, bin: bin}
	th.create("od", th.example(nil))
	th.readyPID("od")
	first.Close()
	path := filepath.Join(home, catcache.FileName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	planted := strings.Replace(string(good), `"tools": [`, `"tools": [{"name":"planted_tool","inputSchema":{"type":"object"}},`, 1)
	if planted == string(good) {
		t.Fatalf("cache does not hold the example's tools as expected:\n%.300s", good)
	}
	for name, data := range map[string]string{"torn": string(good[:len(good)/3]), "planted tool": planted} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		logs := &logRecorder{shared: &logShared{}}
		h := openHostAtLogged(t, home, bin, logs)
		h.Start(t.Context())
		th := &testHost{Host: h, t: t, bin: bin}
		waitFor(t, name+": od ready", func() bool { return th.status("od").State == apitype.StateReady })
		if got := strings.Join(th.toolsOf("od"), ","); strings.Contains(got, "planted") {
			t.Errorf("%s: a tool only the cache lists is offered: %s", name, got)
		}
		found := false
		for _, r := range logs.records() {
			found = found || strings.Contains(r.msg, "catalog cache")
		}
		if !found {
			t.Errorf("%s: no log line says the cache was not used", name)
		}
		h.Close()
	}
}

func testenvBinary(t *testing.T) string {
	t.Helper()
	return testenv.Binary(t)
}

func openHostAt(t *testing.T, home, bin string) *Host {
	return openHostAtLogged(t, home, bin, &logRecorder{shared: &logShared{}})
}

func openHostAtLogged(t *testing.T, home, bin string, logs *logRecorder) *Host {
	t.Helper()
	st, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Store: st, Shim: []string{bin, "__plexus-shim"}, Logger: slog.New(logs)})
}
