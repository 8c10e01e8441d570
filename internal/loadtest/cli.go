package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/cmdline"
)

const usage = `plexus-load drives an MCP endpoint and measures it.

  plexus-load --stdio 'CMD ARGS' | --url URL [--header K:V]… [workload]
  plexus-load --compare [--server 'CMD ARGS'] [--plexus PATH] [--via http|stdio] [workload]
  plexus-load --startup [--server 'CMD ARGS'] [--servers N]
  plexus-load --serve-tools N        (a stdio MCP server with N tools)
  plexus-load --fleet [--clients N] [--npx] [--plexus PATH]
                                     (N clients × 8 npm servers: each its own,
                                      Plexus eager, Plexus on demand)
  plexus-load --first-call N [--plexus PATH]
                                     (server-memory's first call, N times: a
                                      direct start against Plexus on demand)

The workload: --tool, --args, -n calls, -c callers, -s sessions, --protocol,
--client (sdk, or raw: the least a 2026-07-28 client can do).
--compare runs it directly against the server and through a Plexus daemon
it starts on a temporary home (one caller, then -c callers, default 16).
The default server is the example server, plexus example-server. Every
mode but --serve-tools ends with one JSON line holding every number.

`

// Main runs the load tool with args (without the program name) and returns
// its exit code: 0, 1 when a run fails, 2 for a usage error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plexus-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	var (
		stdio      = fs.String("stdio", "", "a stdio server to drive, as a command line")
		url        = fs.String("url", "", "a streamable HTTP endpoint to drive")
		client     = fs.String("client", ClientSDK, "the MCP client to drive with: sdk (the official Go SDK's) or raw (MCP 2026-07-28 as bytes: what the endpoint adds, not what a client costs)")
		protocol   = fs.String("protocol", "", "the protocol version to ask for: "+Protocol2026+", "+Protocol2025+" or "+Protocol20250618+" (default: the SDK's latest)")
		tool       = fs.String("tool", "echo", "the tool to call (its upstream name is enough behind Plexus)")
		argsJSON   = fs.String("args", `{"text":"x"}`, "the tool's arguments, a JSON object")
		calls      = fs.Int("n", 1000, "measured calls")
		conc       = fs.Int("c", 0, "concurrent callers (default 1; with --compare, 16 for the throughput phase)")
		sessions   = fs.Int("s", 1, "sessions the callers share")
		warmup     = fs.Int("warmup", 0, "unmeasured calls first (default a tenth of -n, 10 to 200; -1 none)")
		timeout    = fs.Duration("timeout", 30*time.Second, "the longest a call may take; longer counts as an error")
		pid        = fs.Int("pid", 0, "a process whose RSS and CPU time to report")
		compare    = fs.Bool("compare", false, "compare a stdio server directly and through a Plexus daemon")
		startup    = fs.Bool("startup", false, "measure a daemon's start: cold, and with --servers servers")
		server     = fs.String("server", "", "with --compare/--startup: the stdio server (default: plexus example-server)")
		plexus     = fs.String("plexus", "", "with --compare/--startup: the plexus binary (default: beside this one, else on PATH)")
		via        = fs.String("via", ViaHTTP, "with --compare: reach the daemon over its HTTP face (http) or through `plexus mcp` (stdio)")
		servers    = fs.Int("servers", 1, "with --compare/--startup: copies of the server the daemon runs")
		idle       = fs.Int("idle-sessions", 0, "with --compare: open this many more sessions and report the RSS they add")
		serveTools = fs.Int("serve-tools", 0, "serve a stdio MCP server with this many tools (echo and tool_001…)")
		fleet      = fs.Bool("fleet", false, "measure N clients using the same eight npm servers: each client its own, Plexus eager, Plexus on demand (RSS, processes, first call)")
		clients    = fs.Int("clients", 5, "with --fleet: the clients")
		fleetNpx   = fs.Bool("npx", false, "with --fleet: run every server as `npx -y PACKAGE@VERSION`, as editors do, instead of its installed bin")
		firstCall  = fs.Int("first-call", 0, "measure the first call to a stopped server this many times each way: a direct start against Plexus on demand (medians)")
		headers    = http.Header{}
	)
	fs.Func("header", "K:V, a header for every request to --url (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want K:V, got %q", s)
		}
		headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "plexus-load: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run plexus-load -h for the modes and flags.")
		return 2
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	if *serveTools > 0 {
		if err := WideServer(*serveTools).Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "plexus-load:", err)
			return 1
		}
		return 0
	}
	if *firstCall > 0 {
		bin, err := plexusBinary(*plexus)
		if err != nil {
			return usageErr("%v", err)
		}
		rep, err := FirstCall(ctx, bin, *firstCall, stderr)
		return report(stdout, stderr, rep, err, func() { printFirstCall(stdout, rep) })
	}
	if *fleet {
		bin, err := plexusBinary(*plexus)
		if err != nil {
			return usageErr("%v", err)
		}
		rep, err := Fleet(ctx, FleetOptions{Plexus: bin, Clients: *clients, Npx: *fleetNpx, Progress: stderr})
		return report(stdout, stderr, rep, err, func() { printFleet(stdout, rep) })
	}
	w := Workload{Tool: *tool, Args: json.RawMessage(*argsJSON), Calls: *calls, Concurrency: *conc,
		Sessions: *sessions, Warmup: *warmup, CallTimeout: *timeout, PID: *pid}
	if err := w.defaults(); err != nil {
		return usageErr("%v", err)
	}
	w.Concurrency = *conc // defaults() made it ≥ 1; compare has its own default

	if *compare || *startup {
		if *stdio != "" || *url != "" {
			return usageErr("--compare and --startup start their own server: use --server, not --stdio or --url")
		}
		bin, err := plexusBinary(*plexus)
		if err != nil {
			return usageErr("%v", err)
		}
		argv := []string{bin, "example-server"}
		if *server != "" {
			if argv, err = cmdline.Split(*server); err != nil || len(argv) == 0 {
				return usageErr("--server %q: %v", *server, orEmpty(err))
			}
			if strings.ContainsRune(argv[0], filepath.Separator) {
				// A relative path is this directory's, not the daemon's.
				if argv[0], err = filepath.Abs(argv[0]); err != nil {
					return usageErr("--server %q: %v", *server, err)
				}
			}
		}
		if *startup {
			rep, err := Startup(ctx, bin, argv, *servers)
			return report(stdout, stderr, rep, err, func() { printStartup(stdout, rep) })
		}
		if err := (Target{Stdio: argv, Protocol: *protocol, Client: *client}).validate(); err != nil {
			return usageErr("%v", err)
		}
		rep, err := Compare(ctx, CompareOptions{Plexus: bin, Server: argv, Servers: *servers, Via: *via, Protocol: *protocol, Client: *client,
			Workload: w, Concurrency: *conc, IdleSessions: *idle, Progress: stdout})
		return report(stdout, stderr, rep, err, func() { printRatios(stdout, rep) })
	}

	t := Target{URL: *url, Header: headers, Protocol: *protocol, Client: *client}
	if *stdio != "" {
		argv, err := cmdline.Split(*stdio)
		if err != nil || len(argv) == 0 {
			return usageErr("--stdio %q: %v", *stdio, orEmpty(err))
		}
		t.Stdio = argv
	}
	if len(headers) > 0 && t.URL == "" {
		return usageErr("--header goes with --url")
	}
	if err := t.validate(); err != nil {
		return usageErr("%v", err)
	}
	w.Concurrency = max(w.Concurrency, 1)
	r, err := Run(ctx, t, w)
	return report(stdout, stderr, r, err, func() { fmt.Fprintln(stdout, r.Line()) })
}

func orEmpty(err error) error {
	if err == nil {
		return errors.New("empty command")
	}
	return err
}

// report prints the human summary and then v as one JSON line, or the error.
func report[T any](stdout, stderr io.Writer, v *T, err error, human func()) int {
	if err != nil {
		fmt.Fprintln(stderr, "plexus-load:", err)
		return 1
	}
	human()
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(stderr, "plexus-load:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

func printRatios(w io.Writer, rep *Report) {
	r, d := rep.Ratios, rep.Daemon
	fmt.Fprintf(w, "added latency, 1 caller: p50 %s  p99 %s  (×%.2f, ×%.2f)\n", fmtUs(r.AddedP50Us), fmtUs(r.AddedP99Us), r.P50, r.P99)
	fmt.Fprintf(w, "throughput, %d callers: ×%.2f of direct\n", rep.Concurrency, r.Throughput)
	fmt.Fprintf(w, "daemon: cpu/call %s  idle rss %.1f MiB with %d server(s)  ready %.1fms, servers ready %.1fms",
		fmtUs(d.CPUPerCallUs), mib(d.IdleRSS), d.Servers, d.ReadyMs, d.ServersReadyMs)
	if d.IdleSessions > 0 {
		fmt.Fprintf(w, "  +%.1f MiB for %d sessions", mib(d.SessionsRSS), d.IdleSessions)
	}
	fmt.Fprintln(w)
}

func printStartup(w io.Writer, rep *StartupReport) {
	fmt.Fprintf(w, "cold start (no servers): ready %.1fms, rss %.1f MiB\n", rep.ColdReadyMs, mib(rep.ColdRSS))
	fmt.Fprintf(w, "%d servers: API %.1fms, all ready %.1fms; direct in parallel: slowest %.1fms, median %.1fms; over slowest %+.1fms; idle rss %.1f MiB\n",
		rep.Servers, rep.ReadyMs, rep.ServersReadyMs, rep.DirectSlowestMs, rep.DirectMedianMs, rep.OverSlowestMs, mib(rep.IdleRSS))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// plexusBinary is flag, else "plexus" beside this executable, else on PATH.
func plexusBinary(flagValue string) (string, error) {
	if flagValue != "" {
		p, err := exec.LookPath(flagValue)
		if err != nil {
			return "", err
		}
		return filepath.Abs(p) // the daemon runs it from its own directory
	}
	if exe, err := os.Executable(); err == nil {
		sib := filepath.Join(filepath.Dir(exe), "plexus")
		if fi, err := os.Stat(sib); err == nil && !fi.IsDir() {
			return sib, nil
		}
	}
	p, err := exec.LookPath("plexus")
	if err != nil {
		return "", errors.New("no plexus binary beside this one or on PATH: give --plexus PATH")
	}
	return p, nil
}
