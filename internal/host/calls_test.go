package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
)

func metaOf(res *mcp.CallToolResult) (kind, outcome any) {
	if res == nil || res.Meta == nil {
		return nil, nil
	}
	return res.Meta[apitype.MetaError], res.Meta[apitype.MetaOutcome]
}

func TestCallEcho(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(nil))
	res, err := th.Call(t.Context(), catalog.ReadableName("ex", "echo"), json.RawMessage(`{"text": "hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || resultText(res) != "hello" {
		t.Errorf("echo = %+v, want hello", res)
	}
	if kind, _ := metaOf(res); kind != nil {
		t.Errorf("a successful call carries %s = %v", apitype.MetaError, kind)
	}

	// A tool's own refusal is the server's answer, not a Plexus failure.
	res, err = th.Call(t.Context(), catalog.ReadableName("ex", "now"), json.RawMessage(`{"timezone": "Nowhere/Atlantis"}`))
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "unknown time zone") {
		t.Errorf("now(bad zone) = %+v, %v; want the tool's error result", res, err)
	}
	if kind, _ := metaOf(res); kind != nil {
		t.Errorf("a tool's own error result carries %s = %v", apitype.MetaError, kind)
	}
}

func TestCallUnknownTool(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(nil))
	for _, name := range []string{"nope", catalog.ReadableName("ex", "nope"), catalog.ReadableName("other", "echo")} {
		res, err := th.Call(t.Context(), name, nil)
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.What != "tool" || nf.Name != name || res != nil {
			t.Errorf("Call(%s) = %+v, %v; want *NotFoundError for the tool", name, res, err)
		}
	}
}

func TestCallTimeout(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(map[string]any{"callTimeoutMs": 50}))
	pid := th.status("ex").PID
	start := time.Now()
	res, err := th.Call(t.Context(), catalog.ReadableName("ex", "sleep"), json.RawMessage(`{"ms": 60000}`))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Call = %v, want an error result", err)
	}
	if kind, _ := metaOf(res); !res.IsError || kind != "timeout" {
		t.Errorf("sleep with a 50 ms timeout = %+v, want an error result with %s = timeout", res, apitype.MetaError)
	}
	if !strings.Contains(resultText(res), "timed out after 50ms") {
		t.Errorf("message %q does not say how long it waited", resultText(res))
	}
	if took > 3*time.Second {
		t.Errorf("the call took %s with a 50 ms timeout", took)
	}
	// The server is still fine: the same process answers an echo. The echo
	// has the same 50 ms timeout, which a race-built server on a busy
	// machine once missed; an echo that timed out is tried again.
	waitFor(t, "an echo answered after the timeout", func() bool {
		res, err := th.Call(t.Context(), catalog.ReadableName("ex", "echo"), json.RawMessage(`{"text": "still here"}`))
		if err != nil {
			t.Fatalf("echo after a timeout: %v", err)
		}
		if kind, _ := metaOf(res); kind == "timeout" {
			return false
		}
		if res.IsError || resultText(res) != "still here" {
			t.Fatalf("echo after a timeout = %+v", res)
		}
		return true
	})
	if st := th.status("ex"); st.State != "ready" || st.PID != pid {
		t.Errorf("after a timed-out call: state %s, pid %d, want ready and pid %d", st.State, st.PID, pid)
	}
}

// TestRawCallTimeout: a frame call (the face's path) past its server's
// callTimeoutMs fails as a timeout, as a decoded call does — its limit is
// kept by the connection's one timer, not by a context of its own
// (upstream/frameexpiry.go) — and the server goes on serving.
func TestRawCallTimeout(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(map[string]any{"callTimeoutMs": 50}))
	pid := th.status("ex").PID
	sess, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool, args string) *mcp.CallToolResult {
		raw, handled, err := sess.CallRaw(t.Context(), catalog.ReadableName("ex", tool),
			map[string]json.RawMessage{"name": json.RawMessage(`"x"`), "arguments": json.RawMessage(args)})
		if err != nil || !handled {
			t.Fatalf("CallRaw(%s) = %s, %v, %v", tool, raw, handled, err)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("CallRaw(%s) answered %s: %v", tool, raw, err)
		}
		return &res
	}
	start := time.Now()
	res := call("sleep", `{"ms": 60000}`)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the call took %s with a 50 ms timeout", took)
	}
	if kind, _ := metaOf(res); !res.IsError || kind != "timeout" {
		t.Errorf("sleep with a 50 ms timeout = %+v, want an error result with %s = timeout", res, apitype.MetaError)
	}
	if !strings.Contains(resultText(res), "timed out after 50ms") {
		t.Errorf("message %q does not say how long it waited", resultText(res))
	}
	waitFor(t, "an echo answered after the timeout", func() bool {
		res := call("echo", `{"text": "still here"}`)
		if kind, _ := metaOf(res); kind == "timeout" {
			return false // a race-built server on a busy machine may miss 50 ms
		}
		if res.IsError || resultText(res) != "still here" {
			t.Fatalf("echo after a timeout = %+v", res)
		}
		return true
	})
	if st := th.status("ex"); st.State != "ready" || st.PID != pid {
		t.Errorf("after a timed-out call: state %s, pid %d, want ready and pid %d", st.State, st.PID, pid)
	}
}

// TestCallTransportLost kills the server while a call is in flight: the
// call's outcome is unknown, the server is failed, keeps its tools, and
// further calls fail at once.
func TestCallTransportLost(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.tracedExample(nil))
	pgid := th.readyPID("ex")
	sleep := catalog.ReadableName("ex", "sleep")
	entries, _, _ := th.Tools("ex")

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := th.Call(t.Context(), sleep, json.RawMessage(`{"ms": 600000}`))
		done <- result{res, err}
	}()
	// The server traces each message it reads: kill it once the call is in.
	waitFor(t, "the sleep call to reach the server", func() bool {
		return slices.ContainsFunc(th.status("ex").Stderr, func(l string) bool {
			return strings.HasPrefix(l, "read: ") && strings.Contains(l, `"tools/call"`) && strings.Contains(l, `"sleep"`)
		})
	})
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return after the server was killed")
	}
	if r.err != nil {
		t.Fatalf("Call = %v, want an error result", r.err)
	}
	kind, outcome := metaOf(r.res)
	if !r.res.IsError || kind != "transport_lost" || outcome != "unknown" {
		t.Errorf("call during a kill = %+v (meta %v), want transport_lost with outcome unknown", r.res, r.res.Meta)
	}
	if text := resultText(r.res); !strings.Contains(text, "outcome is unknown") {
		t.Errorf("message %q does not say the outcome is unknown", text)
	}

	// A server lost after running is restarted with backoff (R-SUP-2).
	waitFor(t, "the server to be in backoff", func() bool { return th.status("ex").State == "backoff" })
	st := th.status("ex")
	if st.PID != 0 || !strings.Contains(st.LastError, "connection lost") || st.NextTryAt == nil {
		t.Errorf("status = %+v, want no process, a lost connection and the next try", st)
	}
	// The leader is reaped by the host; the killed server itself is an
	// orphan now, whose zombie is init's to reap.
	waitFor(t, "the killed server's processes to be gone", func() bool { return !liveInGroup(t, pgid) })

	tools, warnings, _ := th.Tools("ex")
	if !slices.ContainsFunc(tools, func(e catalog.Entry) bool { return e.Name == sleep }) || !slices.EqualFunc(tools, entries, func(a, b catalog.Entry) bool { return a.Name == b.Name }) {
		t.Errorf("catalog after the crash = %d entries, want the server's %d kept", len(tools), len(entries))
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "ex is backoff") {
		t.Errorf("warnings = %q, want one saying ex is in backoff", warnings)
	}

	start := time.Now()
	res, err := th.Call(t.Context(), catalog.ReadableName("ex", "echo"), json.RawMessage(`{"text": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if kind, _ := metaOf(res); !res.IsError || kind != "unavailable" || !strings.Contains(resultText(res), "restarting, next try in") {
		t.Errorf("call to the restarting server = %+v, want an unavailable error result saying when it is retried", res)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the call to a restarting server took %s, want it to fail at once", took)
	}

	// It comes back by itself, with the same tool names, and serves again.
	waitFor(t, "the server to be ready again", func() bool { return th.status("ex").State == "ready" })
	if st := th.status("ex"); st.Restarts != 1 || st.PID == 0 || st.PID == pgid {
		t.Errorf("after the restart: %+v", st)
	}
	res, err = th.Call(t.Context(), catalog.ReadableName("ex", "echo"), json.RawMessage(`{"text": "back"}`))
	if err != nil || res.IsError || resultText(res) != "back" {
		t.Errorf("echo after the restart = %+v, %v", res, err)
	}
}

// TestCloseStopsEverything checks that Close ends and reaps every server's
// process group; TestMain checks that no goroutine is left.
func TestCloseStopsEverything(t *testing.T) {
	th := newTestHost(t)
	th.create("a", th.example(nil))
	th.create("b", th.example(nil))
	if _, err := th.PutServer(t.Context(), PutRequest{Name: "c", Config: failing(), Create: true, NoVerify: true}); err != nil {
		t.Fatal(err)
	}
	pids := []int{th.readyPID("a"), th.readyPID("b")}
	th.Close()
	for _, pid := range pids {
		assertGroupGone(t, "after Close", pid)
	}
	if _, all := th.Servers(); len(all) != 0 {
		t.Errorf("Servers() after Close = %+v, want none", all)
	}
	if tools, _, _ := th.Tools(""); len(tools) != 0 {
		t.Errorf("%d tools after Close, want none", len(tools))
	}
}

// TestCancellationReachesServer: when the call times out, and when the
// caller goes away, the server is sent notifications/cancelled for that
// request (R-SES-5), and is not asked again.
func TestCancellationReachesServer(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.tracedExample(map[string]any{"callTimeoutMs": 100}))
	sleep := catalog.ReadableName("ex", "sleep")
	cancelled := func() int {
		n := 0
		for _, l := range th.status("ex").Stderr {
			if strings.HasPrefix(l, "read: ") && strings.Contains(l, `"notifications/cancelled"`) {
				n++
			}
		}
		return n
	}

	// The daemon's own timeout.
	res, err := th.Call(t.Context(), sleep, json.RawMessage(`{"ms": 60000}`))
	if err != nil || !res.IsError {
		t.Fatalf("timed-out call = %+v, %v", res, err)
	}
	waitFor(t, "the cancellation of the timed-out call to reach the server", func() bool { return cancelled() == 1 })

	// The caller goes away.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := th.Call(ctx, sleep, json.RawMessage(`{"ms": 60000}`))
		done <- err
	}()
	waitFor(t, "the second sleep to reach the server", func() bool {
		n := 0
		for _, l := range th.status("ex").Stderr {
			if strings.HasPrefix(l, "read: ") && strings.Contains(l, `"sleep"`) && strings.Contains(l, `60000`) {
				n++
			}
		}
		return n == 2
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned call = %v, want context.Canceled", err)
	}
	waitFor(t, "the cancellation of the abandoned call to reach the server", func() bool { return cancelled() == 2 })
}
