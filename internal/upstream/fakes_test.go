package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/lifeline"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// The test binary doubles as every process the tests need: re-executed with
// shimArg it is the lifeline shim, with fakeEnv it is a fake server, with
// daemonEnv it is a daemon that the test kills.
const (
	shimArg   = "-plexus-upstream-shim"
	fakeEnv   = "PLEXUS_UPSTREAM_FAKE"
	daemonEnv = "PLEXUS_UPSTREAM_DAEMON"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(lifeline.Main(os.Args[2:]))
	}
	switch mode := os.Getenv(fakeEnv); mode {
	case "":
	case "sdk":
		os.Exit(runSDKFake())
	case "raw":
		os.Exit(runRawFake())
	case "exit-early":
		fmt.Fprintf(os.Stderr, "fatal: cannot use token %s\n", os.Getenv("FAKE_SECRET"))
		os.Exit(2)
	case "hang":
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "late":
		os.Exit(runLateFake())
	default:
		fmt.Fprintf(os.Stderr, "unknown fake mode %q\n", mode)
		os.Exit(1)
	}
	if os.Getenv(daemonEnv) != "" {
		os.Exit(runDaemon())
	}
	goleak.VerifyTestMain(m)
}

// serverInfo is what the fake's "info" tool returns.
type serverInfo struct {
	PID        int `json:"pid"`
	PGID       int `json:"pgid"`
	Grandchild int `json:"grandchild"`
}

// runSDKFake is an SDK server on stdio with small pages. FAKE_* variables add
// misbehaviour: a stdout banner, a grandchild holding stdout, deafness to
// SIGTERM and to the end of stdin.
func runSDKFake() int {
	if os.Getenv("FAKE_GARBAGE") != "" {
		fmt.Println("Welcome to fake server! (not JSON-RPC)")
	}
	fmt.Fprintf(os.Stderr, "starting with token %s\n", os.Getenv("FAKE_SECRET"))
	fmt.Fprintf(os.Stderr, "long line %s\n", strings.Repeat("x", 10000))
	info := serverInfo{PID: os.Getpid(), PGID: unix.Getpgrp()}
	if os.Getenv("FAKE_GRANDCHILD") != "" {
		gc := exec.Command("sleep", "1000")
		gc.Stdout = os.Stdout // holds the MCP stream open
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		info.Grandchild = gc.Process.Pid
	}
	stubborn := os.Getenv("FAKE_STUBBORN") != ""
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1.0"}, &mcp.ServerOptions{PageSize: 2})
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(string(req.Params.Arguments)), nil
	})
	s.AddTool(&mcp.Tool{Name: "info", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(info)
		return text(string(b)), nil
	})
	s.AddTool(&mcp.Tool{Name: "env", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strings.Join(os.Environ(), "\n")), nil
	})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang_up", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// Closes the stream at once but exits only later, as a server
		// does whose exit is slow to be reaped.
		os.Stdout.Close()
		time.Sleep(hangUpExitDelay)
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "slow started")
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "slow cancelled")
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "add_tool", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(&mcp.Tool{Name: "added", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("added"), nil
		})
		return text("ok"), nil
	})
	for i := range 3 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("filler%d", i), InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("filler"), nil
		})
	}
	for i := range 3 {
		uri := fmt.Sprintf("fake://doc/%d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("doc%d", i)}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "content of " + uri}}}, nil
		})
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "fake://item/{id}", Name: "item"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
	})
	var t mcp.Transport = &mcp.StdioTransport{}
	if log := os.Getenv("FAKE_STDIN_LOG"); log != "" {
		// What the server reads is logged as it reads it: the server's own
		// read is what empties its stdin pipe, as it would be without the log.
		f, err := os.Create(log)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		t = &mcp.IOTransport{Reader: stdinLogged{io.TeeReader(os.Stdin, f)}, Writer: stdoutNoClose{os.Stdout}}
	}
	err := s.Run(context.Background(), t)
	fmt.Fprintf(os.Stderr, "server stopped: %v\n", err)
	if stubborn {
		select {}
	}
	return 0
}

// runLateFake answers every line of its stdin with a result, each after
// FAKE_LATE_MS: a server slower than its startup timeout. It writes as a
// plain program does, so a write to a pipe its reader has closed ends it
// with SIGPIPE.
func runLateFake() int {
	delay, _ := time.ParseDuration(os.Getenv("FAKE_LATE_MS") + "ms")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		time.Sleep(delay)
		fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", msg.ID)
	}
	return 0
}

// askFrame is the request the raw fake's tool ask sends mid-call.
const askFrame = `{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}},"message":"proceed?","x-extra":[1,2]}}`

// runRawFake speaks NDJSON by hand, as a server of protocol 2025-06-18 that
// ignores methods it does not know (server/discover among them) instead of
// answering with an error. FAKE_REPEAT_CURSOR makes tools/list page forever.
func runRawFake() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	reply := func(id json.RawMessage, result any) {
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	tool := func(name string) map[string]any {
		return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
	}
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Cursor    string          `json:"cursor"`
				Arguments json.RawMessage `json:"arguments"`
				Meta      struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintf(os.Stderr, "bad message: %v\n", err)
			continue
		}
		fmt.Fprintf(os.Stderr, "got %s\n", msg.Method)
		if msg.ID == nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			if os.Getenv("FAKE_RICH") != "" {
				fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, richInitialize)
				continue
			}
			reply(msg.ID, map[string]any{
				"protocolVersion": "2025-06-18",
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "raw", "version": "0.1"},
			})
		case "resources/templates/list", "prompts/list", "resources/list":
			if os.Getenv("FAKE_RICH") == "" || msg.Method == "resources/templates/list" {
				fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", msg.ID)
				continue
			}
			list := map[string]string{"prompts/list": `"prompts":[` + richPrompt + `]`, "resources/list": `"resources":[` + richResource + `]`}[msg.Method]
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{%s}}`+"\n", msg.ID, list)
		case "tools/list":
			switch {
			case os.Getenv("FAKE_RICH") != "":
				fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s,%s]}}`+"\n", msg.ID, richTools[0], richTools[1])
			case os.Getenv("FAKE_REPEAT_CURSOR") != "":
				reply(msg.ID, map[string]any{"tools": []any{tool("loop")}, "nextCursor": "again"})
			case msg.Params.Cursor == "":
				reply(msg.ID, map[string]any{"tools": []any{tool("a"), tool("b")}, "nextCursor": "page2"})
			default:
				reply(msg.ID, map[string]any{"tools": []any{tool("c")}})
			}
		case "tools/call":
			if msg.Params.Name == "chatty" {
				// Progress, then the answer at once: all in one write.
				var b strings.Builder
				for i := 1; i <= 3; i++ {
					fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3}}`+"\n", msg.Params.Meta.ProgressToken, i)
				}
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", msg.ID)
				os.Stdout.WriteString(b.String())
				continue
			}
			if msg.Params.Name == "hostile" {
				// Requests and notifications without params, with null or
				// wrong-typed ones, mid-call (hostile_test.go).
				for _, f := range hostileFrames {
					fmt.Fprintln(os.Stdout, f)
				}
				reply(msg.ID, map[string]any{"content": []any{}})
				continue
			}
			if msg.Params.Name == "ask" {
				// A 2025-06-18 server's elicitation: no mode (that field
				// came later), fields in the server's own order.
				fmt.Fprintln(os.Stdout, askFrame)
				in.Scan() // the answer
				reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": in.Text()}}})
				continue
			}
			reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(msg.Params.Arguments)}}})
			if msg.Params.Name == "deaf" {
				select {} // stop reading stdin, so that the pipe fills up
			}
		case "ping":
			reply(msg.ID, map[string]any{})
		case "tasks/get":
			fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, richTask)
		default:
			if os.Getenv("FAKE_RICH") != "" {
				fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", msg.ID)
			}
		}
		// Anything else, server/discover included, gets no answer at all.
	}
	return 0
}

// runDaemon connects to a fake server through the shim, prints the server's
// info, and waits to be killed.
func runDaemon() int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	ctx := context.Background()
	c, err := Connect(ctx, Spec{
		Name: "victim",
		Type: "stdio",
		Argv: []string{exe},
		Env:  map[string]string{fakeEnv: "sdk", "FAKE_GRANDCHILD": "1"},
		Shim: []string{exe, shimArg},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := c.CallTool(ctx, "info", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	time.Sleep(time.Hour)
	return 0
}

// stdinLogged is the fake's stdin with a copy of what it reads logged; it
// closes stdin.
type stdinLogged struct{ io.Reader }

func (stdinLogged) Close() error { return os.Stdin.Close() }

// stdoutNoClose is the fake's stdout, left open when the session ends, as
// mcp.StdioTransport leaves it.
type stdoutNoClose struct{ io.Writer }

func (stdoutNoClose) Close() error { return nil }

// What the raw fake with FAKE_RICH offers, as it writes it: members no SDK
// struct models (an extension's capability, a tool's _meta and
// execution, an annotation of a newer spec), key orders of its own, white
// space, and a list it does not implement (resources/templates/list).
const (
	richInitialize = `{"protocolVersion":"2025-06-18","serverInfo":{"name":"rich","version":"0.1","websiteUrl":"https://example.com"},` +
		`"capabilities":{"tools":{"listChanged":false},"resources":{},"prompts":{},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`
	richResource = `{"uri":"ui://rich/view.html","name":"view","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"prefersBorder":true}}}`
	richTask     = `{"taskId":"t-1","status":"working","x-vendor":{"eta":3},"pollInterval":500}`
	richPrompt   = `{"name":"greet","description":"  Says hello.  ","arguments":[{"name":"who","required":true,"x-extra":1}],"icons":[{"src":"https://example.com/p.png"}]}`
)

var richTools = [2]string{
	`{"name":"show","description":"Shows a view.\n\n  Indented line, trailing space. ",` +
		`"inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"the query"}},"required":["q"],"$schema":"http://json-schema.org/draft-07/schema#"},` +
		`"annotations":{"readOnlyHint":true,"x-newHint":"kept"},"execution":{"taskSupport":"optional"},` +
		`"_meta":{"ui":{"resourceUri":"ui://rich/view.html"},"ui/resourceUri":"ui://rich/view.html"}}`,
	`{ "inputSchema" : { "type" : "object" } , "name" : "plain" }`,
}
