package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/exampleserver"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// tracedExampleArg re-executes the test binary as the example server with
// every message it reads and writes traced to stderr, so that a test can
// see when a call has reached the server. Everything else runs the real
// plexus binary.
const tracedExampleArg = "-plexus-host-traced-example"

// TestMain fails the package if a test leaves a goroutine behind (STYLE
// rule 10): every server the host started must be stopped and waited for.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == pinsServerArg {
		runPinsServer(os.Args[2:]) // pins_test.go; never returns
	}
	if len(os.Args) > 1 && os.Args[1] == rawServerArg {
		runRawServer(os.Args[2:]) // offer_test.go; never returns
	}
	if len(os.Args) > 1 && os.Args[1] == growingServerArg {
		runGrowingServer() // listchanged_test.go; never returns
	}
	if len(os.Args) > 1 && os.Args[1] == tracedExampleArg {
		t := &mcp.LoggingTransport{Transport: &mcp.StdioTransport{}, Writer: os.Stderr}
		if err := exampleserver.Run(context.Background(), t); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// testHost is a Host over a real store in a temporary home, running stdio
// servers behind the real lifeline shim.
type testHost struct {
	*Host
	t    *testing.T
	st   *store.Store
	bin  string
	logs *logRecorder
}

func newTestHost(t *testing.T) *testHost {
	t.Helper()
	return newTestHostAt(t, filepath.Join(t.TempDir(), "home"))
}

// newTestHostAt is newTestHost with the home at a given place.
func newTestHostAt(t *testing.T, home string) *testHost {
	t.Helper()
	bin := testenv.Binary(t)
	st, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{shared: &logShared{}}
	h := New(Options{Store: st, Shim: []string{bin, "__plexus-shim"}, Logger: slog.New(logs)})
	t.Cleanup(h.Close)
	return &testHost{Host: h, t: t, st: st, bin: bin, logs: logs}
}

// example is the config of the built-in example server, plus extra keys.
func (th *testHost) example(extra map[string]any) json.RawMessage {
	m := map[string]any{"type": "stdio", "command": th.bin, "args": []string{"example-server"}}
	for k, v := range extra {
		m[k] = v
	}
	return mustJSON(th.t, m)
}

// tracedExample is the example server run from the test binary, tracing
// its messages to stderr.
func (th *testHost) tracedExample(extra map[string]any) json.RawMessage {
	exe, err := os.Executable()
	if err != nil {
		th.t.Fatal(err)
	}
	m := map[string]any{"type": "stdio", "command": exe, "args": []string{tracedExampleArg}}
	for k, v := range extra {
		m[k] = v
	}
	return mustJSON(th.t, m)
}

func failing() json.RawMessage {
	return json.RawMessage(`{"type": "stdio", "command": "sh", "args": ["-c", "echo boom >&2; exit 3"]}`)
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// create adds a server that must start.
func (th *testHost) create(name string, cfg json.RawMessage) int64 {
	th.t.Helper()
	rev, err := th.PutServer(th.t.Context(), PutRequest{Name: name, Config: cfg, Create: true})
	if err != nil {
		th.t.Fatalf("adding %s: %v", name, err)
	}
	return rev
}

func (th *testHost) status(name string) apitype.ServerStatus {
	th.t.Helper()
	sc, err := th.Server(name)
	if err != nil {
		th.t.Fatalf("Server(%s): %v", name, err)
	}
	return sc.Status
}

// readyPID returns the PID (the process group) of a ready server.
func (th *testHost) readyPID(name string) int {
	th.t.Helper()
	st := th.status(name)
	if st.State != "ready" || st.PID <= 0 {
		th.t.Fatalf("%s: state %q, pid %d; want ready with a process (last error %q)", name, st.State, st.PID, st.LastError)
	}
	return st.PID
}

// firstPID reads events until one gives a PID for server name's status
// (whatever its state) and returns it: for a server that may be stopped
// again before a status read could see it running.
func firstPID(t *testing.T, events <-chan apitype.Event, name string) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("%s: the event subscription ended before a PID was announced", name)
			}
			if ev.Server == name && ev.Status != nil && ev.Status.PID > 0 {
				return ev.Status.PID
			}
		case <-deadline:
			t.Fatalf("%s: no PID announced within 30s", name)
		}
	}
}

// waitFor polls cond for at most 30 s: for state changes that are
// announced by no event a test can wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupGone reports whether no process of the group is left, zombies
// included: kill(2) finds a zombie until it is reaped.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// liveInGroup reports whether a process of the group is alive, not
// counting zombies.
func liveInGroup(t *testing.T, pgid int) bool {
	t.Helper()
	if groupGone(pgid) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc to tell zombies apart: count them as alive
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

func assertGroupGone(t *testing.T, what string, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("%s: process group %d still exists (kill(-pgid, 0) = %v), want ESRCH", what, pgid, err)
	}
}

func assertGroupAlive(t *testing.T, what string, pgid int) {
	t.Helper()
	if groupGone(pgid) {
		t.Errorf("%s: process group %d is gone, want it running", what, pgid)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// logRecorder is a slog.Handler that keeps every record with its attributes,
// in order, so that a test can check what happened before what.
type logRecorder struct {
	shared *logShared
	attrs  []slog.Attr
}

type logShared struct {
	mu   sync.Mutex
	recs []logRecord
}

type logRecord struct {
	msg   string
	attrs map[string]any
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	lr := logRecord{msg: rec.Message, attrs: map[string]any{}}
	for _, a := range r.attrs {
		lr.attrs[a.Key] = a.Value.Resolve().Any()
	}
	rec.Attrs(func(a slog.Attr) bool {
		lr.attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	r.shared.mu.Lock()
	r.shared.recs = append(r.shared.recs, lr)
	r.shared.mu.Unlock()
	return nil
}

func (r *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &logRecorder{shared: r.shared, attrs: append(append([]slog.Attr(nil), r.attrs...), as...)}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

func (r *logRecorder) records() []logRecord {
	r.shared.mu.Lock()
	defer r.shared.mu.Unlock()
	return append([]logRecord(nil), r.shared.recs...)
}
