package e2e

//lint:file-ignore SA1019 Plexus relays roots, sampling and logging between agents and servers: these tests drive them, deprecated or not, while the protocol keeps them.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// pathRecorder notes, for each tools/call a client POSTs, how the face
// answered it: "json" (the frame path, framesession.go) or "sse" (the SDK's
// handler, which answers a session's request with an event stream).
type pathRecorder struct {
	token string
	mu    sync.Mutex
	paths []string
	seen  bytes.Buffer // what the face wrote back to calls, as the client read it
}

// teeBody keeps what a body's reader reads in seen.
type teeBody struct {
	io.ReadCloser
	p *pathRecorder
}

func (t teeBody) Read(b []byte) (int, error) {
	n, err := t.ReadCloser.Read(b)
	t.p.mu.Lock()
	t.p.seen.Write(b[:n])
	t.p.mu.Unlock()
	return n, err
}

// streamed is everything the face wrote back to calls so far.
func (p *pathRecorder) streamed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

func (p *pathRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+p.token)
	var call bool
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		call = bytes.Contains(b, []byte(`"method":"tools/call"`))
		if bytes.Contains(b, []byte(`"id":"plexus-ask-`)) {
			// the client's answer to a question the frame path put to it
			p.mu.Lock()
			p.paths = append(p.paths, "answer")
			p.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && call {
		path := "sse"
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			path = "json"
		}
		p.mu.Lock()
		p.paths = append(p.paths, path)
		p.mu.Unlock()
		resp.Body = teeBody{resp.Body, p}
	}
	return resp, err
}

func (p *pathRecorder) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.Join(p.paths, " ")
	p.paths = nil
	return s
}

// callsUpstream reads plexus_calls_total of server from the metrics.
func callsUpstream(t *testing.T, base, token, server string) int {
	t.Helper()
	n := 0
	re := regexp.MustCompile(`(?m)^plexus_calls_total\{outcome="[a-z_]+",path="[a-z]+",server="` + server + `"\} (\d+)$`)
	for _, m := range re.FindAllStringSubmatch(scrape(t, base, token), -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// scrape is the daemon's /metrics.
func scrape(t *testing.T, base, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestFaceSessionFramePath: a session-era client (as Claude Code, VS Code
// and Cursor are) has its calls forwarded as frames, answered as JSON; a
// call whose server asks for input in its result has the client asked on
// its stream, and the server called again with the answer (twice in
// all); a cancellation reaches the server; a client that sets a log level
// keeps its calls forwarded.
func TestFaceSessionFramePath(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	all := tools(t, e)
	echo, ask, sleep := toolNamed(t, all, "example", "echo").Name, toolNamed(t, all, "example", "ask").Name, toolNamed(t, all, "example", "sleep").Name
	rec := &pathRecorder{token: token}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}
	text := textOf(t)

	for i := range 4 {
		want := "x" + strconv.Itoa(i)
		if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": want}})); got != want {
			t.Fatalf("echo %d: %q", i, got)
		}
	}
	// Forwarded as frames from the session's first call on.
	if got := rec.take(); got != "json json json json" {
		t.Errorf("paths of four calls: %s, want json json json json", got)
	}
	// A tool error comes back as the server wrote it, on the frame path too.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolNamed(t, all, "example", "now").Name, Arguments: map[string]any{"timezone": "Not/AZone"}})
	if err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Not/AZone") {
		t.Errorf("tool error: %v %+v", err, res)
	}
	if got := rec.take(); got != "json" {
		t.Errorf("path of a tool error: %s", got)
	}

	// ask: the server asks in its result; the face asks the client on the
	// call's stream and calls again with the answer: the server sees two
	// calls.
	before := callsUpstream(t, base, token, "example")
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "ok?"}})); got != "answer: yes" {
		t.Errorf("ask: %q", got)
	}
	if n := callsUpstream(t, base, token, "example") - before; n != 2 {
		t.Errorf("ask called the server %d times, want 2 (a question, then the answer)", n)
	}
	rec.take()

	// Cancelled by notifications/cancelled (the SDK client sends it when
	// the call's context ends): the server's sleep stops.
	cctx, ccancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, ccancel)
	start := time.Now()
	if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 60000}}); err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled call: %v after %s", err, time.Since(start))
	}
	if got := rec.take(); got != "json" && got != "sse" && got != "" {
		t.Errorf("path of the cancelled call: %q", got) // an event stream once it ran 200 ms
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.MustRun("logs", "example"), "sleep cancelled") {
		if time.Now().After(deadline) {
			t.Fatal("the server's sleep was not cancelled")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 1}})); got != "slept 1 ms" {
		t.Errorf("after cancel: %q", got)
	}
	rec.take()

	// A log level set: the session's calls are forwarded still.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "y"}})); got != "y" {
		t.Errorf("echo after setLevel: %q", got)
	}
	if got := rec.take(); got != "json" {
		t.Errorf("path after setLevel: %s, want json", got)
	}
}

// TestFaceSessionFrameAsks: a session-era server asks the client in the
// middle of a frame call (elicitation, roots): the question rides the
// call's answer, now an event stream, and the client's answer comes back
// to the call; the server is called once. A client that did not declare
// elicitation is refused as on the SDK's path.
func TestFaceSessionFrameAsks(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	addOldServer(t, e)
	all := tools(t, e)
	echo, ask, roots := toolNamed(t, all, "old", "echo").Name, toolNamed(t, all, "old", "ask").Name, toolNamed(t, all, "old", "roots").Name
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	connect := func(opts *mcp.ClientOptions, rootURI string) (*mcp.ClientSession, *pathRecorder) {
		rec := &pathRecorder{token: token}
		c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, opts)
		if rootURI != "" {
			c.AddRoots(&mcp.Root{URI: rootURI, Name: "work"})
		}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: rec}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, rec
	}
	text := textOf(t)
	cs, rec := connect(&mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes to " + req.Params.Message}}, nil
		},
	}, "file:///work/frame")
	for range 2 {
		if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "e"}})); got != "e" {
			t.Fatalf("echo: %q", got)
		}
	}
	if got := rec.take(); got != "json json" {
		t.Fatalf("paths of two calls: %s, want json json", got)
	}
	before := callsUpstream(t, base, token, "old")
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "ok?"}})); got != "answer: yes to ok?" {
		t.Errorf("ask: %q", got)
	}
	if n := callsUpstream(t, base, token, "old") - before; n != 1 {
		t.Errorf("ask called the server %d times, want 1", n)
	}
	if got := rec.take(); got != "answer sse" && got != "sse answer" {
		t.Errorf("ask: %q, want the call answered as a stream and the client's answer to the frame path's question", got)
	}
	// The server's request reaches the client as the server wrote it: a
	// field Plexus does not set is not written as "" (a TypeScript client
	// refuses an elicitation whose mode is "").
	if s := rec.streamed(); !strings.Contains(s, `"method":"elicitation/create"`) || strings.Contains(s, `"mode":""`) || !strings.Contains(s, `"requestedSchema"`) {
		t.Errorf("the elicitation as the client got it:\n%s", s)
	}
	if got := text(cs.CallTool(ctx, &mcp.CallToolParams{Name: roots})); got != "file:///work/frame" {
		t.Errorf("roots: %q", got)
	}
	if got := rec.take(); !strings.Contains(got, "answer") {
		t.Errorf("roots: %q, want the frame path's question answered", got)
	}

	// No elicitation declared: refused, as the SDK's path refuses it.
	plain, prec := connect(nil, "")
	text(plain.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "e"}}))
	prec.take()
	res, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "ok?"}})
	if err == nil && !res.IsError || err != nil && !strings.Contains(err.Error(), "does not support elicitation") && !strings.Contains(err.Error(), "elicitation") {
		t.Errorf("ask without elicitation: %+v %v", res, err)
	}
	if got := prec.take(); got != "json" {
		t.Errorf("path of the refused ask: %q", got)
	}
}

// addOldServer adds the example server as "old", pinned to the session
// era (it then asks for input in the middle of a call, not in its result).
func addOldServer(t *testing.T, e *testenv.Env) {
	t.Helper()
	e.MustRun("add", "old", "--", e.Bin, "example-server")
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), `"old": {`, `"old": {"protocolVersion": "2025-11-25",`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
}
