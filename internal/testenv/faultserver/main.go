// Command faultserver is an MCP server over stdio that misbehaves on
// purpose, for the fault-injection tests of the daemon (docs/security.md,
// F-S1 to F-S17). It is configured by flags only, because the daemon
// passes a stdio server no environment but HOME, PATH, TMPDIR and the
// values it names.
//
// Every fault is active only while the file given by --fault-file exists
// (always, without the flag), so a test ends a fault by removing the file
// and then watches the daemon recover:
//
//	--crash-at start,handshake,call  exit 3 before reading stdin / on
//	                                 server/discover or initialize / inside
//	                                 a tools/call of tool work
//	--hang-at handshake,call         stop answering there, ignoring
//	                                 cancellation, until the fault ends
//	--garbage                        write a non-JSON line to stdout before
//	                                 every message
//	--huge-line BYTES                tool work answers with one line of
//	                                 about BYTES bytes
//	--stderr-flood                   write stderr lines as fast as possible
//	--grandchild                     start `sleep 1000` in the process group,
//	                                 holding stdout, and leave it running on
//	                                 a crash
//	--count-file PATH                append one line per work call, synced,
//	                                 before acting on it
//	--start-file PATH                append "server PID UNIXNANO" per process
//	                                 start (and "grandchild PID UNIXNANO"),
//	                                 synced
//	--echo-description-file PATH     the description of tool echo is the
//	                                 content of PATH, read at start (for the
//	                                 pinning tests: a tool that changes)
//
//	--resource URI                   offer a resource at URI, which a client
//	                                 may subscribe to
//
// It always offers the tools work and echo (input {"text": "..."}) and
// writes "faultserver ready" to stderr once it serves.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// crashCode is the exit code of every crash, so tests can tell a crash
// from a kill.
const crashCode = 3

// pollInterval is how often a hang or the flood looks for the fault file.
const pollInterval = 20 * time.Millisecond

type config struct {
	faultFile    string
	crashAt      stages
	hangAt       stages
	garbage      bool
	hugeLine     int
	stderrFlood  bool
	grandchild   bool
	countFile    string
	startFile    string
	echoDescFile string
	resource     string
}

// stages is a comma-separated set of stage names.
type stages map[string]bool

func (s stages) String() string {
	var names []string
	for n := range s {
		names = append(names, n)
	}
	return strings.Join(names, ",")
}

func (s stages) Set(v string) error {
	for n := range strings.SplitSeq(v, ",") {
		switch n {
		case "start", "handshake", "call":
			s[n] = true
		default:
			return fmt.Errorf("unknown stage %q: want start, handshake or call", n)
		}
	}
	return nil
}

func main() {
	c := config{crashAt: stages{}, hangAt: stages{}}
	flag.StringVar(&c.faultFile, "fault-file", "", "faults are active only while `PATH` exists")
	flag.Var(c.crashAt, "crash-at", "exit 3 at these `stages`: start, handshake, call")
	flag.Var(c.hangAt, "hang-at", "hang at these `stages`: handshake, call")
	flag.BoolVar(&c.garbage, "garbage", false, "write a non-JSON line to stdout before every message")
	flag.IntVar(&c.hugeLine, "huge-line", 0, "tool work answers with one line of about `BYTES` bytes")
	flag.BoolVar(&c.stderrFlood, "stderr-flood", false, "write stderr lines as fast as possible")
	flag.BoolVar(&c.grandchild, "grandchild", false, "start sleep 1000 in the process group, holding stdout")
	flag.StringVar(&c.countFile, "count-file", "", "append one line per work call to `PATH`")
	flag.StringVar(&c.startFile, "start-file", "", "append one line per process start to `PATH`")
	flag.StringVar(&c.echoDescFile, "echo-description-file", "", "the description of tool echo is the content of `PATH`, read at start")
	flag.StringVar(&c.resource, "resource", "", "offer a resource at `URI`, which a client may subscribe to")
	flag.Parse()
	if c.hangAt["start"] {
		fmt.Fprintln(os.Stderr, "faultserver: --hang-at start is not supported")
		os.Exit(2)
	}
	if err := run(c); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "faultserver:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if err := appendLine(c.startFile, startLine("server", os.Getpid())); err != nil {
		return err
	}
	if c.grandchild {
		// Its stdout is ours: the daemon's read end stays open after we die.
		gc := exec.Command("sleep", "1000")
		gc.Stdout = os.Stdout
		if err := gc.Start(); err != nil {
			return fmt.Errorf("starting the grandchild: %w", err)
		}
		if err := appendLine(c.startFile, startLine("grandchild", gc.Process.Pid)); err != nil {
			return err
		}
	}
	if c.crashAt["start"] && c.active() {
		c.crash("start")
	}

	// Subscriptions are accepted (the tests of a server held awake by one).
	s := mcp.NewServer(&mcp.Implementation{Name: "faultserver", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	if c.resource != "" {
		s.AddResource(&mcp.Resource{URI: c.resource, Name: "state", MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "ok"}}}, nil
			})
	}
	s.AddReceivingMiddleware(c.handshakeFaults)
	mcp.AddTool(s, &mcp.Tool{Name: "work", Description: "Do some work that a test can count; the faults strike here."}, c.work)
	echoDesc := "Return the given text."
	if c.echoDescFile != "" {
		b, err := os.ReadFile(c.echoDescFile)
		if err != nil {
			return fmt.Errorf("reading the description of echo: %w", err)
		}
		echoDesc = string(b)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: echoDesc},
		func(_ context.Context, _ *mcp.CallToolRequest, in textInput) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})

	var t mcp.Transport = &mcp.StdioTransport{}
	if c.garbage {
		t = &mcp.IOTransport{Reader: os.Stdin, Writer: &garbageWriter{c: &c, w: os.Stdout}}
	}
	fmt.Fprintln(os.Stderr, "faultserver ready")
	if c.stderrFlood {
		go c.flood()
	}
	return s.Run(context.Background(), t)
}

// active reports whether the faults are on.
func (c *config) active() bool {
	if c.faultFile == "" {
		return true
	}
	_, err := os.Stat(c.faultFile)
	return err == nil
}

// crash exits at once, leaving the grandchild, if any, behind.
func (c *config) crash(stage string) {
	fmt.Fprintf(os.Stderr, "faultserver: crash at %s\n", stage)
	os.Exit(crashCode)
}

// hang blocks until the fault ends. It ignores cancellation on purpose: a
// hung server does not listen.
func (c *config) hang(stage string) {
	fmt.Fprintf(os.Stderr, "faultserver: hanging at %s\n", stage)
	for c.active() {
		time.Sleep(pollInterval)
	}
	fmt.Fprintf(os.Stderr, "faultserver: hang at %s is over\n", stage)
}

// handshakeFaults strikes on the first message of the handshake:
// server/discover (2026-07-28) or initialize, whichever the client sends.
func (c *config) handshakeFaults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" || method == "server/discover" {
			if c.crashAt["handshake"] && c.active() {
				c.crash("handshake (" + method + ")")
			}
			if c.hangAt["handshake"] && c.active() {
				c.hang("handshake (" + method + ")")
			}
		}
		return next(ctx, method, req)
	}
}

type textInput struct {
	Text string `json:"text"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (c *config) work(_ context.Context, _ *mcp.CallToolRequest, in textInput) (*mcp.CallToolResult, any, error) {
	// Counted before acting, so a crash below still leaves its line.
	if err := appendLine(c.countFile, "work "+strconv.Quote(in.Text)); err != nil {
		return nil, nil, err
	}
	if !c.active() {
		return text("worked: " + in.Text), nil, nil
	}
	if c.crashAt["call"] {
		c.crash("call")
	}
	if c.hangAt["call"] {
		c.hang("call")
		return text("worked late: " + in.Text), nil, nil
	}
	if c.hugeLine > 0 {
		return text(strings.Repeat("x", c.hugeLine)), nil, nil
	}
	return text("worked: " + in.Text), nil, nil
}

// startLine is a line of the start file: what started, its pid, and when
// (Unix nanoseconds), so that a test can measure the backoff.
func startLine(what string, pid int) string {
	return what + " " + strconv.Itoa(pid) + " " + strconv.FormatInt(time.Now().UnixNano(), 10)
}

// appendLine appends line to the file at path (if any) and syncs it, so a
// test that reads the file after a crash sees every line.
func appendLine(path, line string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// garbageWriter writes a line that is not JSON before every message. The
// SDK writes each message with one Write, under its own lock.
type garbageWriter struct {
	c  *config
	w  io.Writer
	mu sync.Mutex
	n  int
}

func (g *garbageWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.active() {
		g.n++
		if _, err := fmt.Fprintf(g.w, "faultserver garbage %d: this is not JSON {\n", g.n); err != nil {
			return 0, err
		}
	}
	return g.w.Write(p)
}

func (g *garbageWriter) Close() error { return nil }

// flood writes stderr lines as fast as the pipe takes them while the fault
// is active.
func (c *config) flood() {
	var on atomic.Bool
	on.Store(c.active())
	go func() {
		for {
			time.Sleep(pollInterval)
			on.Store(c.active())
		}
	}()
	w := bufio.NewWriterSize(os.Stderr, 64<<10)
	pad := strings.Repeat("f", 80)
	for n := 0; ; n++ {
		if !on.Load() {
			w.Flush()
			time.Sleep(pollInterval)
			continue
		}
		fmt.Fprintf(w, "faultserver flood %d %s\n", n, pad)
		if n%256 == 0 {
			w.Flush()
		}
	}
}
