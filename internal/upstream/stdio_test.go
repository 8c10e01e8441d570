package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStdioSDKServer(t *testing.T) {
	logs := &logBuffer{}
	s := fakeSpec(t, "sdk", "FAKE_GARBAGE", "1")
	s.Logger = logs.logger()
	c := mustConnect(t, s)

	if got := c.ProtocolVersion(); got != "2026-07-28" {
		t.Errorf("ProtocolVersion = %q, want 2026-07-28 (the SDK server answers server/discover)", got)
	}
	if c.ServerInfo() == nil || c.ServerInfo().Name != "fake" {
		t.Errorf("ServerInfo = %+v", c.ServerInfo())
	}
	if c.PID() <= 0 {
		t.Errorf("PID = %d", c.PID())
	}

	// Page size 2: every list needs several pages.
	d := c.Discovery()
	tools := names(t, d.Tools)
	slices.Sort(tools)
	want := []string{"add_tool", "crash", "echo", "env", "filler0", "filler1", "filler2", "hang_up", "info", "slow"}
	if !slices.Equal(tools, want) {
		t.Errorf("tools = %v, want %v", tools, want)
	}
	if len(d.Resources) != 3 || len(d.ResourceTemplates) != 1 || len(d.Prompts) != 1 {
		t.Errorf("discovery: %d resources, %d templates, %d prompts; want 3, 1, 1",
			len(d.Resources), len(d.ResourceTemplates), len(d.Prompts))
	}

	ctx := context.Background()
	res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != `{"x":1}` {
		t.Errorf("echo = %q", got)
	}
	rr, err := c.ReadResource(ctx, "fake://doc/1")
	if err != nil || rr.Contents[0].Text != "content of fake://doc/1" {
		t.Errorf("ReadResource = %+v, %v", rr, err)
	}
	pr, err := c.GetPrompt(ctx, "greet", map[string]string{"who": "ann"})
	if err != nil || len(pr.Messages) != 1 {
		t.Errorf("GetPrompt = %+v, %v", pr, err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if _, err := c.CallTool(ctx, "echo", json.RawMessage(`[1]`)); err == nil || errors.Is(err, ErrTransportLost) {
		t.Errorf("array arguments: err = %v, want a plain refusal", err)
	}

	// stderr is kept, cut and redacted; the stdout banner is kept, not fatal.
	if !waitFor(30*time.Second, func() bool { return stderrHas(c, "starting with token [redacted]") }) {
		t.Errorf("stderr ring lacks the redacted line: %q", c.Stderr())
	}
	if !waitFor(30*time.Second, func() bool { return stderrHas(c, "stdout: Welcome to fake server!") }) {
		t.Errorf("stderr ring lacks the stdout banner: %q", c.Stderr())
	}
	for _, l := range c.Stderr() {
		if strings.Contains(l, canary) {
			t.Errorf("secret in stderr ring: %q", l)
		}
		if len(l) > maxLineSize+len(" [cut]") {
			t.Errorf("stderr line of %d bytes not cut", len(l))
		}
	}

	if _, err := c.Refresh(ctx); err != nil {
		t.Errorf("Refresh: %v", err)
	}
	pgid := c.PID()
	c.Close()
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err after Close = %v", c.Err())
	}
	requireGroupDead(t, pgid, 10*time.Second)
	if _, err := c.CallTool(ctx, "echo", nil); !errors.Is(err, ErrNotConnected) || errors.Is(err, ErrTransportLost) {
		t.Errorf("call after Close: %v, want ErrNotConnected only", err)
	}
	if strings.Contains(logs.String(), canary) {
		t.Error("secret in logs")
	}
}

func TestStdioRawServerIgnoresDiscover(t *testing.T) {
	s := fakeSpec(t, "raw")
	s.DiscoverTimeout = 300 * time.Millisecond
	c := mustConnect(t, s)
	if got := c.ProtocolVersion(); got != "2025-06-18" {
		t.Errorf("ProtocolVersion = %q, want 2025-06-18", got)
	}
	if got := names(t, c.Discovery().Tools); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("tools = %v", got)
	}
	res, err := c.CallTool(context.Background(), "a", json.RawMessage(`{"k":"v"}`))
	if err != nil || resultText(t, res) != `{"k":"v"}` {
		t.Errorf("call = %v, %v", res, err)
	}
	// One process: the probe, then initialize on the same connection.
	// (Its stderr is read beside its answers: wait for both lines.)
	waitFor(30*time.Second, func() bool { return len(methodsSeen(c)) >= 2 })
	methods := methodsSeen(c)
	if len(methods) < 2 || methods[0] != "server/discover" || methods[1] != "initialize" {
		t.Errorf("methods seen by the server = %v", methods)
	}
}

func TestStdioRepeatedCursor(t *testing.T) {
	s := fakeSpec(t, "raw", "FAKE_REPEAT_CURSOR", "1")
	s.DiscoverTimeout = 100 * time.Millisecond
	_, err := Connect(context.Background(), s)
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Phase != "listing tools" || !strings.Contains(err.Error(), `server repeated pagination cursor "again"`) {
		t.Fatalf("err = %v, want a listing tools error about the repeated cursor", err)
	}
}

func TestStdioCrashMidCall(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "sdk"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.CallTool(ctx, "crash", nil)
	if !errors.Is(err, ErrTransportLost) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrTransportLost", err)
	}
	wantEndedByExit(t, c, 3)
	_, err = c.CallTool(ctx, "echo", nil)
	if exit := (*ExitError)(nil); !errors.Is(err, ErrNotConnected) || !errors.As(err, &exit) {
		t.Fatalf("call on a Done Conn: %v", err)
	}
}

func TestStdioCancelReachesServer(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "sdk"))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "slow", nil)
		errc <- err
	}()
	if !waitFor(10*time.Second, func() bool { return stderrHas(c, "slow started") }) {
		t.Fatal("slow tool never started")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTransportLost) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The SDK sends notifications/cancelled; the server's handler sees it.
	if !waitFor(10*time.Second, func() bool { return stderrHas(c, "slow cancelled") }) {
		t.Fatalf("server never saw the cancellation; stderr: %q", c.Stderr())
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	if _, err := c.CallTool(dctx, "slow", nil); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTransportLost) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	// The connection survives both.
	if _, err := c.CallTool(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
}

func TestStdioCloseKillsGrandchild(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "sdk", "FAKE_GRANDCHILD", "1"))
	info := callInfo(t, c)
	if info.PGID != c.PID() || !processAlive(info.Grandchild) {
		t.Fatalf("info = %+v, pid %d", info, c.PID())
	}
	c.Close()
	if processAlive(info.Grandchild) {
		t.Fatalf("grandchild %d alive after Close", info.Grandchild)
	}
	requireGroupDead(t, info.PGID, 10*time.Second)
}

func TestStdioExitSeenDespiteGrandchildHoldingStdout(t *testing.T) {
	c := mustConnect(t, fakeSpec(t, "sdk", "FAKE_GRANDCHILD", "1"))
	info := callInfo(t, c)
	if _, err := c.CallTool(context.Background(), "crash", nil); !errors.Is(err, ErrTransportLost) {
		t.Fatalf("err = %v, want ErrTransportLost", err)
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("not Done although the server exited")
	}
	var exit *ExitError
	if !errors.As(c.Err(), &exit) || exit.Code != 3 {
		t.Fatalf("Err = %v, want exit code 3", c.Err())
	}
	// The rest of the group goes without Close.
	if !waitFor(10*time.Second, func() bool { return !processAlive(info.Grandchild) }) {
		t.Fatalf("grandchild %d survived the server's exit", info.Grandchild)
	}
	c.Close()
	requireGroupDead(t, info.PGID, 10*time.Second)
}

func TestStdioStubbornServerIsKilled(t *testing.T) {
	s := fakeSpec(t, "sdk", "FAKE_STUBBORN", "1")
	s.StopGrace = 200 * time.Millisecond
	c := mustConnect(t, s)
	pgid := c.PID()
	c.Close()
	if processAlive(pgid) {
		t.Fatal("server that ignores stdin EOF and SIGTERM is alive after Close")
	}
	requireGroupDead(t, pgid, 10*time.Second)
}

func TestStdioEnvironmentIsReduced(t *testing.T) {
	t.Setenv("PLEXUS_TEST_LEAK", "must-not-pass")
	c := mustConnect(t, fakeSpec(t, "sdk", "EXTRA", "yes"))
	res, err := c.CallTool(context.Background(), "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range strings.Split(resultText(t, res), "\n") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	allowed := []string{"HOME", "PATH", "TMPDIR", fakeEnv, "FAKE_SECRET", "EXTRA"}
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			t.Errorf("unexpected variable %q in the server's environment", k)
		}
	}
	if !slices.Contains(keys, "EXTRA") || !slices.Contains(keys, "PATH") {
		t.Errorf("environment lacks EXTRA or PATH: %v", keys)
	}
}

func TestStdioStartErrors(t *testing.T) {
	s := fakeSpec(t, "sdk")
	s.Argv = []string{"plexus-no-such-command-xyz"}
	_, err := Connect(context.Background(), s)
	var nf *CommandNotFoundError
	var ce *ConnectError
	if !errors.As(err, &nf) || !errors.As(err, &ce) || ce.Phase != PhaseStart {
		t.Fatalf("err = %v, want a start error naming the command", err)
	}
	if !strings.Contains(err.Error(), "plexus-no-such-command-xyz") || !strings.Contains(err.Error(), "/usr/bin") {
		t.Errorf("error does not name the command and the PATH searched: %v", err)
	}

	s = fakeSpec(t, "sdk")
	s.Dir = "/nonexistent/plexus/dir"
	if _, err := Connect(context.Background(), s); err == nil || !strings.Contains(err.Error(), "/nonexistent/plexus/dir") {
		t.Errorf("missing dir: err = %v", err)
	}
}

func TestStdioExitDuringHandshake(t *testing.T) {
	_, err := Connect(context.Background(), fakeSpec(t, "exit-early"))
	var ce *ConnectError
	var exit *ExitError
	if !errors.As(err, &ce) || ce.Phase != PhaseHandshake || !errors.As(err, &exit) || exit.Code != 2 {
		t.Fatalf("err = %v, want a handshake error with exit code 2", err)
	}
	if !strings.Contains(err.Error(), "fatal: cannot use token [redacted]") {
		t.Errorf("error lacks the stderr tail: %v", err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("secret in error: %v", err)
	}
}

func TestStdioStartupTimeout(t *testing.T) {
	s := fakeSpec(t, "hang")
	s.StartupTimeout = 500 * time.Millisecond
	s.StopGrace = 200 * time.Millisecond
	_, err := Connect(context.Background(), s)
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Phase != PhaseHandshake || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "startup timeout") {
		t.Fatalf("err = %v, want a handshake timeout", err)
	}
}

// A server that answers after its startup timeout has passed, to a pipe
// Plexus has closed by then, dies of SIGPIPE: that exit is a consequence,
// and the error still names the timeout as the cause, so that the remedy
// offered (raise the startup timeout) is the right one.
func TestStdioStartupTimeoutThenExit(t *testing.T) {
	s := fakeSpec(t, "late", "FAKE_LATE_MS", "400")
	s.StartupTimeout = 300 * time.Millisecond
	s.StopGrace = 2 * time.Second
	_, err := Connect(context.Background(), s)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "startup timeout (300ms) exceeded") {
		t.Fatalf("err = %v, want the startup timeout as the cause", err)
	}
}

func TestStdioListChanged(t *testing.T) {
	changed := make(chan string, 10)
	s := fakeSpec(t, "sdk")
	s.OnListChanged = func(kind string) { changed <- kind }
	c := mustConnect(t, s)
	if _, err := c.CallTool(context.Background(), "add_tool", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case kind := <-changed:
		if kind != "tools" {
			t.Errorf("kind = %q", kind)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed notification")
	}
	d, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names(t, d.Tools), "added") {
		t.Error("Refresh does not show the added tool")
	}
}

func TestStdioThroughShim(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "close", true: "crash"}[crash], func(t *testing.T) {
			s := fakeSpec(t, "sdk", "FAKE_GRANDCHILD", "1")
			s.Shim = []string{exe, shimArg}
			c := mustConnect(t, s)
			info := callInfo(t, c)
			if info.PGID != c.PID() || info.PID == c.PID() {
				t.Fatalf("info = %+v, shim pid %d: the server should run in the shim's group", info, c.PID())
			}
			if crash {
				if _, err := c.CallTool(context.Background(), "crash", nil); !errors.Is(err, ErrTransportLost) {
					t.Fatalf("err = %v", err)
				}
				<-c.Done()
				var exit *ExitError
				if !errors.As(c.Err(), &exit) || exit.Code != 3 {
					t.Fatalf("Err = %v, want the server's exit code 3 passed on by the shim", c.Err())
				}
			}
			c.Close()
			if processAlive(info.Grandchild) || processAlive(info.PID) {
				t.Fatal("server or grandchild alive after Close")
			}
			requireGroupDead(t, info.PGID, 10*time.Second)
		})
	}
}

func TestStdioCloseFailsCallInFlight(t *testing.T) {
	s := fakeSpec(t, "sdk", "FAKE_STUBBORN", "1")
	s.StopGrace = 200 * time.Millisecond
	c := mustConnect(t, s)
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", nil)
		errc <- err
	}()
	if !waitFor(10*time.Second, func() bool { return stderrHas(c, "slow started") }) {
		t.Fatal("slow tool never started")
	}
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrTransportLost) {
			t.Fatalf("err = %v, want ErrTransportLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call still running after Close")
	}
}

// A server that stops reading its stdin must not hang a call past the end
// of its context (a deadline, a cancellation: the write watches both the
// same way); the half-written message breaks the connection. The context
// ends once the write is under way — part of the message waits in the
// pipe — not at a fixed time: on a loaded machine a fixed 300 ms deadline
// passed before the first byte was written, and a call that wrote nothing
// leaves the connection whole, rightly.
func TestStdioWriteHonoursContext(t *testing.T) {
	s := fakeSpec(t, "raw")
	s.DiscoverTimeout = 100 * time.Millisecond
	s.StopGrace = 200 * time.Millisecond
	c := mustConnect(t, s)
	if _, err := c.CallTool(context.Background(), "deaf", nil); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"pad":"` + strings.Repeat("x", 4<<20) + `"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "echo", big)
		errc <- err
	}()
	if !waitFor(10*time.Second, func() bool { return unreadBytes(c.stdio.w) > 0 }) {
		t.Fatal("the call's message never reached the server's stdin")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call hung past its context's end on a full pipe")
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not ended after a torn write")
	}
	if _, err := c.CallTool(context.Background(), "echo", nil); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("err = %v, want ErrNotConnected", err)
	}
}

// hangUpExitDelay is how long the fake's hang_up tool lives on after
// closing its stdout: less than exitAfterStdout, so its exit is the cause.
const hangUpExitDelay = 2 * time.Second

// TestStdioCallEndsWithTheStream: a call whose server closes its stdout
// fails as lost as soon as the stream ends, on both call paths; it is not
// held until the exit is reaped, which the Conn's end (and its cause, the
// exit code) waits for.
func TestStdioCallEndsWithTheStream(t *testing.T) {
	for _, path := range []string{"decoded", "frame"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			c := mustConnect(t, fakeSpec(t, "sdk"))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var err error
			if path == "frame" {
				_, err = c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"hang_up"`)})
			} else {
				_, err = c.CallTool(ctx, "hang_up", nil)
			}
			if !errors.Is(err, ErrTransportLost) || ctx.Err() != nil {
				t.Fatalf("err = %v, want ErrTransportLost", err)
			}
			select {
			case <-c.Done():
				t.Fatalf("the call was held until the connection ended (%v)", c.Err())
			default:
			}
			if _, err := c.CallRaw(ctx, map[string]json.RawMessage{"name": json.RawMessage(`"echo"`)}); !errors.Is(err, ErrNotConnected) {
				t.Errorf("a call after the stream ended: err = %v, want ErrNotConnected", err)
			}
			wantEndedByExit(t, c, 3)
		})
	}
}

// wantEndedByExit waits for c to end and wants the server's exit code as
// the cause.
func wantEndedByExit(t *testing.T, c *Conn, code int) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not Done after the server exited")
	}
	var exit *ExitError
	if !errors.As(c.Err(), &exit) || exit.Code != code {
		t.Fatalf("Err = %v, want exit code %d", c.Err(), code)
	}
}

// TestStdioExitSoonAfterClosingStdout: a server that closes its stdout
// and exits a moment later (the time its exit takes to be reaped on a
// loaded machine) fails its handshake with its exit code, not only with
// the closed stream.
func TestStdioExitSoonAfterClosingStdout(t *testing.T) {
	s := fakeSpec(t, "sdk")
	s.Argv = []string{"/bin/sh", "-c", "exec >&-; sleep 0.5; exit 3"}
	_, err := Connect(context.Background(), s)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("err = %v, want a handshake error with exit code 3", err)
	}
}

// TestStdioPinnedServerOwnEra: a stdio server pinned to a session-era
// version is asked server/discover before its pinned handshake, as an
// unpinned one is, so that its bare profile can mirror the era it speaks
// of its own: one that speaks only the session era (it lets the probe go
// unanswered) is initialized on the same process; one that answers it is
// started again, its pinned session begun by initialize (a session begun
// by server/discover would refuse the pinned initialize, or the session
// era's requests mid-call).
func TestStdioPinnedServerOwnEra(t *testing.T) {
	t.Parallel()
	t.Run("session era only", func(t *testing.T) {
		t.Parallel()
		s := fakeSpec(t, "raw")
		s.DiscoverTimeout = 300 * time.Millisecond
		s.ProtocolVersion = "2025-11-25"
		c := mustConnect(t, s)
		if got := c.OwnEra(); got != "2025-11-25" {
			t.Errorf("OwnEra = %q, want the pinned 2025-11-25 (the server refused server/discover)", got)
		}
		waitFor(30*time.Second, func() bool { return len(methodsSeen(c)) >= 2 }) // stderr is read beside the answers
		methods := methodsSeen(c)
		if len(methods) < 2 || methods[0] != "server/discover" || methods[1] != "initialize" {
			t.Errorf("one process: methods seen by the server = %v, want server/discover, then initialize", methods)
		}
	})
	t.Run("both eras", func(t *testing.T) {
		t.Parallel()
		s := fakeSpec(t, "sdk")
		s.ProtocolVersion = "2025-11-25"
		c := mustConnect(t, s)
		if got := c.OwnEra(); got != "2026-07-28" {
			t.Errorf("OwnEra = %q, want 2026-07-28 (the server answered server/discover)", got)
		}
		if got := c.ProtocolVersion(); got != "2025-11-25" {
			t.Errorf("ProtocolVersion = %q, want the pinned 2025-11-25", got)
		}
		res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"k":"v"}`))
		if err != nil || resultText(t, res) != `{"k":"v"}` {
			t.Errorf("call on the pinned session = %v, %v", res, err)
		}
	})
}

// methodsSeen are the methods the raw fake server noted on its stderr, in
// the order it read them.
func methodsSeen(c *Conn) []string {
	var methods []string
	for _, l := range c.Stderr() {
		if m, ok := strings.CutPrefix(l, "got "); ok {
			methods = append(methods, m)
		}
	}
	return methods
}
