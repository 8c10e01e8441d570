package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// sane checks what any successful run must satisfy.
func sane(t *testing.T, what string, r *Result, calls int) {
	t.Helper()
	if r.Calls != calls || r.Errors != 0 {
		t.Errorf("%s: %d calls, %d errors (%s); want %d calls, none failed", what, r.Calls, r.Errors, r.FirstError, calls)
	}
	if !(r.P50 > 0 && r.P50 <= r.P90 && r.P90 <= r.P99 && r.P99 <= r.Max) {
		t.Errorf("%s: percentiles out of order: %+v", what, r.Latency)
	}
	if r.Max > 30e6 {
		t.Errorf("%s: a call took %.0fµs, past the call timeout", what, r.Max)
	}
	if r.CallsPerSec <= 0 || r.HandshakeUs <= 0 || r.ListUs <= 0 || r.ElapsedMs <= 0 {
		t.Errorf("%s: zero measurement in %+v", what, r)
	}
	// calls/s and the elapsed time must agree.
	if got := float64(r.Calls) / (r.ElapsedMs / 1e3); got < r.CallsPerSec*0.99 || got > r.CallsPerSec*1.01 {
		t.Errorf("%s: %.0f calls/s but %d calls in %.1fms", what, r.CallsPerSec, r.Calls, r.ElapsedMs)
	}
}

// TestRunExampleServerEveryEra: the SDK client speaks 2026-07-28 and both
// session-era versions, 2025-11-25 and 2025-06-18 (as most editors do).
func TestRunExampleServerEveryEra(t *testing.T) {
	bin := testenv.Binary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, era := range []string{Protocol2026, Protocol2025, Protocol20250618} {
		r, err := Run(ctx, Target{Stdio: []string{bin, "example-server"}, Protocol: era},
			Workload{Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`), Calls: 60, Concurrency: 4, Sessions: 2})
		if err != nil {
			t.Fatalf("%s: %v", era, err)
		}
		sane(t, era, r, 60)
		if r.Protocol != era {
			t.Errorf("negotiated %q, asked for %q", r.Protocol, era)
		}
		if r.Tools < 5 || r.Sessions != 2 || r.Concurrency != 4 {
			t.Errorf("%s: %d tools, %d sessions, %d callers", era, r.Tools, r.Sessions, r.Concurrency)
		}
		stdioProc(t, era, r)
	}
}

// stdioProc checks that a run of a stdio command read what the command
// did (on Linux, where /proc has it): its process and RSS, the two
// sessions' servers summed.
func stdioProc(t *testing.T, what string, r *Result) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	if p := r.StdioProc; p == nil || p.PID <= 0 || p.RSSAfter <= 0 || p.CPUUs < 0 {
		t.Errorf("%s: the stdio command's process reading: %+v", what, p)
	}
}

// TestRunRawClient drives the example server with the raw client: the
// numbers are sane, the era is 2026-07-28, and a tool error counts.
func TestRunRawClient(t *testing.T) {
	bin := testenv.Binary(t)
	target := Target{Stdio: []string{bin, "example-server"}, Client: ClientRaw}
	r, err := Run(t.Context(), target,
		Workload{Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`), Calls: 60, Concurrency: 4, Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	sane(t, "raw", r, 60)
	stdioProc(t, "raw", r)
	if r.Protocol != Protocol2026 || r.Client != ClientRaw || r.Tools < 5 {
		t.Errorf("raw: protocol %q, client %q, %d tools", r.Protocol, r.Client, r.Tools)
	}
	r, err = Run(t.Context(), target, Workload{Tool: "now", Args: json.RawMessage(`{"timezone":"Not/AZone"}`), Calls: 3, Warmup: -1})
	if err != nil || r.Errors != 3 || !strings.Contains(r.FirstError, "Not/AZone") {
		t.Errorf("raw tool errors: %v, %+v", err, r)
	}
	target.Protocol = Protocol2025
	if _, err := Run(t.Context(), target, Workload{Tool: "echo", Calls: 1}); err == nil || !strings.Contains(err.Error(), "2026-07-28 only") {
		t.Errorf("raw client asked for 2025-11-25: %v", err)
	}
}

func TestRunCountsToolErrors(t *testing.T) {
	bin := testenv.Binary(t)
	// An unknown time zone is a tool error on every call.
	r, err := Run(t.Context(), Target{Stdio: []string{bin, "example-server"}},
		Workload{Tool: "now", Args: json.RawMessage(`{"timezone":"Not/AZone"}`), Calls: 5, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 5 || r.FirstError == "" {
		t.Errorf("%d errors (%q), want every one of 5 calls to fail", r.Errors, r.FirstError)
	}
	_, err = Run(t.Context(), Target{Stdio: []string{bin, "example-server"}}, Workload{Tool: "nosuchtool", Calls: 1})
	if err == nil || !strings.Contains(err.Error(), `no tool "nosuchtool"`) {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestRunThroughDaemonKeepsTokenSecret drives the daemon's HTTP face with
// its token and resolves the upstream tool name; neither the result nor
// its summary may carry the token.
func TestRunThroughDaemonKeepsTokenSecret(t *testing.T) {
	bin := testenv.Binary(t)
	d, err := StartDaemon(t.Context(), bin, [][]string{{bin, "example-server"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if _, err := d.WaitServers(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitTool(t.Context(), "echo", ""); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{ClientSDK, ClientRaw} {
		r, err := Run(t.Context(), Target{URL: d.FaceURL(), Header: d.Auth(), Client: client},
			Workload{Tool: "echo", Args: json.RawMessage(`{"text":"x"}`), Calls: 40, Concurrency: 3, Sessions: 2, PID: d.PID})
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		t.Log(client, r.Line())
		sane(t, "face, "+client, r, 40)
		if r.Proc == nil || r.Proc.PID != d.PID || r.Proc.RSSAfter <= 0 || r.Proc.CPUUs < 0 {
			t.Errorf("%s: daemon process reading: %+v", client, r.Proc)
		}
		if r.StdioProc != nil {
			t.Errorf("%s: a URL has no stdio command, but the run read one: %+v", client, r.StdioProc)
		}
		b, _ := json.Marshal(r)
		if tok := d.token; len(tok) < 16 || bytes.Contains(b, []byte(tok)) || strings.Contains(r.Line(), tok) {
			t.Errorf("%s: the daemon's token (%d chars) is in the result", client, len(tok))
		}
		// Without the token the face refuses, and the error says so.
		_, err = Run(t.Context(), Target{URL: d.FaceURL(), Client: client}, Workload{Tool: "echo", Calls: 1})
		if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "token") && !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("%s: no token: %v", client, err)
		}
	}
}
