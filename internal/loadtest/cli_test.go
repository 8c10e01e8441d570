package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// lastJSON decodes the last line of out, which must be the whole report.
func lastJSON[T any](t *testing.T, out string) *T {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var v T
	dec := json.NewDecoder(strings.NewReader(lines[len(lines)-1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("last line is not the JSON report: %v\n%s", err, out)
	}
	return &v
}

func TestMainCompareEndsWithJSONLine(t *testing.T) {
	bin := testenv.Binary(t)
	code, out, errs := runMain(t, "--compare", "--plexus", bin, "-n", "40", "-c", "4", "--idle-sessions", "3", "--servers", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rep := lastJSON[Report](t, out)
	sane(t, "direct, 1 caller", rep.Direct.Latency, 40)
	sane(t, "plexus, 1 caller", rep.Plexus.Latency, 40)
	sane(t, "direct, 4 callers", rep.Direct.Throughput, 40)
	sane(t, "plexus, 4 callers", rep.Plexus.Throughput, 40)
	if !strings.HasPrefix(rep.Plexus.Latency.Target, "http://127.0.0.1:") || rep.Via != ViaHTTP {
		t.Errorf("the Plexus leg went to %s via %s, want the HTTP face", rep.Plexus.Latency.Target, rep.Via)
	}
	if rep.Plexus.Throughput.Concurrency != 4 || rep.Direct.Latency.Concurrency != 1 {
		t.Errorf("phases: %d and %d callers", rep.Direct.Latency.Concurrency, rep.Plexus.Throughput.Concurrency)
	}
	d := rep.Daemon
	if d.PID <= 0 || d.IdleRSS < 1<<20 || d.ReadyMs <= 0 || d.ServersReadyMs < d.ReadyMs || d.IdleSessions != 3 || d.Servers != 2 {
		t.Errorf("daemon numbers: %+v", d)
	}
	r := rep.Ratios
	if r.Throughput <= 0 || r.P50 <= 0 || r.PlexusErrors != 0 || r.DirectErrors != 0 {
		t.Errorf("ratios: %+v", r)
	}
	if want := rep.Plexus.Latency.P50 - rep.Direct.Latency.P50; r.AddedP50Us != want {
		t.Errorf("added p50 %v, want %v", r.AddedP50Us, want)
	}
	for _, s := range []string{"added latency, 1 caller", "throughput, 4 callers", "daemon: cpu/call"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in the human summary:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Bearer") {
		t.Errorf("the output holds an Authorization header:\n%s", out)
	}
}

func TestMainCompareViaPlexusMCP(t *testing.T) {
	bin := testenv.Binary(t)
	code, out, errs := runMain(t, "--compare", "--plexus", bin, "--via", "stdio", "--protocol", Protocol2025, "-n", "20", "-c", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rep := lastJSON[Report](t, out)
	sane(t, "plexus mcp, 1 caller", rep.Plexus.Latency, 20)
	sane(t, "plexus mcp, 2 callers", rep.Plexus.Throughput, 20)
	if !strings.Contains(rep.Plexus.Latency.Target, `"mcp"`) || rep.Plexus.Latency.Protocol != Protocol2025 {
		t.Errorf("Plexus leg: %s, protocol %s; want plexus mcp in the session era", rep.Plexus.Latency.Target, rep.Plexus.Latency.Protocol)
	}
}

func TestMainStartup(t *testing.T) {
	bin := testenv.Binary(t)
	code, out, errs := runMain(t, "--startup", "--plexus", bin, "--servers", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rep := lastJSON[StartupReport](t, out)
	if rep.Servers != 3 || rep.ColdReadyMs <= 0 || rep.ServersReadyMs < rep.ReadyMs || rep.DirectSlowestMs < rep.DirectMedianMs ||
		rep.DirectMedianMs <= 0 || rep.IdleRSS < 1<<20 || rep.ColdRSS < 1<<20 {
		t.Errorf("startup numbers: %+v", rep)
	}
}

func TestMainStdioRun(t *testing.T) {
	bin := testenv.Binary(t)
	code, out, errs := runMain(t, "--stdio", bin+" example-server", "-n", "20", "-c", "2", "--tool", "sha256", "--args", `{"text":"abc"}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	sane(t, "stdio", lastJSON[Result](t, out), 20)
}

func TestMainUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no endpoint"},
		{[]string{"--stdio", "x", "--url", "http://127.0.0.1:1/mcp"}, "not both"},
		{[]string{"--stdio", "x", "--protocol", "2024-01-01"}, `protocol "2024-01-01"`},
		{[]string{"--stdio", "x", "--args", "[1]"}, "must be a JSON object"},
		{[]string{"--stdio", "x", "--args", "{"}, "must be a JSON object"},
		{[]string{"--stdio", "a | b"}, "--stdio"},
		{[]string{"--stdio", "x", "--header", "K:V"}, "--header goes with --url"},
		{[]string{"--url", "http://127.0.0.1:1/mcp", "--header", "novalue"}, "want K:V"},
		{[]string{"--compare", "--stdio", "x"}, "use --server"},
		{[]string{"--compare", "--plexus", "/nonexistent/plexus"}, "/nonexistent/plexus"},
		{[]string{"--stdio", "x", "-n", "-3"}, "cannot be negative"},
		{[]string{"--stdio", "x", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, errs := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestMainRunErrorIsClear(t *testing.T) {
	code, _, errs := runMain(t, "--url", "http://127.0.0.1:1/mcp", "-n", "1")
	if code != 1 || !strings.Contains(errs, "connecting to http://127.0.0.1:1/mcp") {
		t.Errorf("unreachable URL: exit %d, %q", code, errs)
	}
}

func TestWideServer(t *testing.T) {
	ct, st := mcp.NewInMemoryTransports()
	ctx := t.Context()
	ss, err := WideServer(200).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := listTools(ctx, cs)
	if err != nil || len(tools) != 200 {
		t.Fatalf("%d tools, %v; want 200", len(tools), err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "wide"}})
	if err != nil || resultText(res) != "wide" {
		t.Errorf("echo: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_199", Arguments: map[string]any{}})
	if err != nil || resultText(res) != "ok" {
		t.Errorf("tool_199: %v %v", res, err)
	}
}

// TestMainRelativePaths: a relative --plexus (and --server) names a file
// of this directory, though the daemon runs the server from its own.
func TestMainRelativePaths(t *testing.T) {
	bin := testenv.Binary(t)
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "plexus")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errs := runMain(t, "--compare", "--plexus", "./plexus", "--server", "./plexus example-server", "--client", "raw", "-n", "20", "-c", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	rep := lastJSON[Report](t, out)
	sane(t, "raw, 1 caller", rep.Plexus.Latency, 20)
	if rep.Client != ClientRaw || rep.Plexus.Latency.Protocol != Protocol2026 {
		t.Errorf("client %q, protocol %q", rep.Client, rep.Plexus.Latency.Protocol)
	}
}
