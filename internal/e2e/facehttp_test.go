package e2e

//lint:file-ignore SA1019 Plexus relays roots, sampling and logging between agents and servers: these tests drive them, deprecated or not, while the protocol keeps them.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// faceEnv is a daemon with the example server and the face's external
// calls on, plus the profiles given (JSON members of "profiles").
func faceEnv(t *testing.T, profiles string) (*testenv.Env, string, string) {
	t.Helper()
	return faceEnvWith(t, `"allowExternalCall": true`, profiles)
}

// faceEnvWith is faceEnv with the face's settings given (JSON members of
// "face").
func faceEnvWith(t *testing.T, face, profiles string) (*testenv.Env, string, string) {
	t.Helper()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	extra := `"face": {` + face + `},`
	if profiles != "" {
		extra += `"profiles": {` + profiles + `},`
	}
	b = []byte(strings.Replace(string(b), `"mcp": {`, `"mcp": {`+extra, 1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	return faceURL(t, e)
}

// bearer adds the daemon token to every request (sent by base, or by
// http.DefaultTransport when base is nil).
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.base != nil {
		return b.base.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// httpFace connects an SDK client to the face at url.
func httpFace(t *testing.T, url, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textOf(t *testing.T) func(*mcp.CallToolResult, error) string {
	return func(res *mcp.CallToolResult, err error) string { t.Helper(); return textOfResult(t, res, err) }
}

func textOfResult(t *testing.T, res *mcp.CallToolResult, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	text := contentText(res)
	if res.IsError {
		t.Fatalf("error result: %s", text)
	}
	return text
}

// contentText is the text of a result's content.
func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestFaceHTTPGuard: the HTTP face wants the token, refuses a foreign Host
// or Origin (DNS rebinding, docs/security.md T1) and anything before
// initialize.
func TestFaceHTTPGuard(t *testing.T) {
	t.Parallel()
	_, base, token := faceEnv(t, "")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(body string, hdr ...string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(hdr); i += 2 {
			if hdr[i] == "Host" {
				req.Host = hdr[i+1]
				continue
			}
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	auth := "Bearer " + token
	for _, tc := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"no token", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer " + strings.Repeat("0", 64)}, 401},
		{"foreign Host", []string{"Authorization", auth, "Host", "evil.example.com"}, 403},
		{"foreign Host with port", []string{"Authorization", auth, "Host", "evil.example.com:7780"}, 403},
		{"foreign Origin", []string{"Authorization", auth, "Origin", "http://evil.example.com"}, 403},
		{"null Origin", []string{"Authorization", auth, "Origin", "null"}, 403},
		{"good", []string{"Authorization", auth}, 200},
	} {
		if code, body := post(init, tc.hdr...); code != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, code, tc.want, body)
		}
	}
	// Anything but initialize first is a protocol error.
	code, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Authorization", auth)
	if (code < 400 || code >= 500) && !strings.Contains(body, `"error"`) {
		t.Errorf("tools/list before initialize: %d %s", code, body)
	}
	if code, _ := post(init, "Authorization", auth); code != 200 {
		t.Fatal("initialize refused")
	}
}

// TestFaceHTTPProfiles: /mcp serves the whole catalog under Plexus names;
// a bare profile passes the one server's own names through (R-SES-1a); a
// meta-tools profile offers search, describe and call instead (R-CAT-8).
func TestFaceHTTPProfiles(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, `"ex": {"servers": ["example"], "naming": "bare"},
		"exc": {"servers": ["example"], "naming": "bare", "controlTools": true},
		"meta": {"servers": ["example"], "metaTools": true}`)
	echo := toolNamed(t, tools(t, e), "example", "echo").Name

	all := httpFace(t, base+"/mcp", token, nil)
	names := toolNames(t, all)
	if !slices.Contains(names, echo) || !slices.Contains(names, "plexus_status") || slices.Contains(names, "echo") {
		t.Fatalf("/mcp tools: %v", names)
	}
	if got := textOf(t)(all.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "hi"}})); got != "hi" {
		t.Errorf("echo via /mcp: %q", got)
	}
	// A client that declares every capability takes the same frame path.
	rich := httpFace(t, base+"/mcp", token, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		Sampling:    &mcp.SamplingCapabilities{}}})
	if got := textOf(t)(rich.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "rich"}})); got != "rich" {
		t.Errorf("echo from a client with every capability: %q", got)
	}
	prompts, err := all.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) == 0 || !strings.HasPrefix(prompts.Prompts[0].Name, "example__") {
		t.Fatalf("/mcp prompts: %+v %v", prompts, err)
	}

	bare := httpFace(t, base+"/mcp/ex", token, nil)
	names = toolNames(t, bare)
	for _, want := range []string{"echo", "sha256", "now", "sleep", "ask"} {
		if !slices.Contains(names, want) {
			t.Errorf("bare profile lacks %s: %v", want, names)
		}
	}
	// Transparent: nothing of Plexus's own, unless the profile asks.
	if slices.Contains(names, "plexus_status") || slices.Contains(names, "plexus_snapshot") {
		t.Errorf("a bare profile offers Plexus's own tools: %v", names)
	}
	if names := toolNames(t, httpFace(t, base+"/mcp/exc", token, nil)); !slices.Contains(names, "plexus_status") || !slices.Contains(names, "echo") {
		t.Errorf("a bare profile with controlTools: %v", names)
	}
	if got := textOf(t)(bare.CallTool(t.Context(), &mcp.CallToolParams{Name: "sha256", Arguments: map[string]any{"text": "abc"}})); !strings.HasPrefix(got, "ba7816bf") {
		t.Errorf("sha256 via bare: %q", got)
	}
	res, err := bare.ListResources(t.Context(), nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("bare resources: %+v %v", res, err)
	}
	rr, err := bare.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil || len(rr.Contents) == 0 {
		t.Fatalf("reading %s: %+v %v", res.Resources[0].URI, rr, err)
	}
	pr, err := bare.ListPrompts(t.Context(), nil)
	if err != nil || len(pr.Prompts) == 0 {
		t.Fatalf("bare prompts: %+v %v", pr, err)
	}
	if _, err := bare.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: pr.Prompts[0].Name, Arguments: map[string]string{"text": "a long text"}}); err != nil {
		t.Errorf("bare prompt %s: %v", pr.Prompts[0].Name, err)
	}

	meta := httpFace(t, base+"/mcp/meta", token, nil)
	names = toolNames(t, meta)
	if !slices.Contains(names, "search_tools") || !slices.Contains(names, "call_tool") || slices.Contains(names, echo) {
		t.Fatalf("meta profile tools: %v", names)
	}
	found := textOf(t)(meta.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "digest"}}))
	if !strings.Contains(found, "sha256") {
		t.Errorf("search_tools digest: %s", found)
	}
	var hits []struct{ Name string }
	json.Unmarshal([]byte(found), &hits)
	if got := textOf(t)(meta.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": hits[0].Name, "arguments": map[string]any{"text": "abc"}}})); !strings.HasPrefix(got, "ba7816bf") {
		t.Errorf("call_tool: %q", got)
	}

	// An unknown profile is refused.
	req, _ := http.NewRequest("POST", base+"/mcp/nope", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown profile: %d", resp.StatusCode)
	}
}

// TestFaceElicitationRouting: two clients call the same shared server at
// once and each is asked its own question: each answer reaches only the
// call it belongs to (R-PROTO-2).
func TestFaceElicitationRouting(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	ask := toolNamed(t, tools(t, e), "example", "ask").Name

	// Both elicitations must be pending at once, so that the routing is
	// tested with two calls in flight.
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	var asked sync.Map
	client := func(who string) *mcp.ClientSession {
		return httpFace(t, base+"/mcp", token, &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(who, req.Params.Message)
				arrived.Done()
				select {
				case <-both:
				case <-time.After(20 * time.Second):
					return nil, fmt.Errorf("the other elicitation never arrived")
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "I am " + who}}, nil
			},
		})
	}
	a, b := client("alice"), client("bob")
	var wg sync.WaitGroup
	got := map[string]string{}
	var mu sync.Mutex
	for who, cs := range map[string]*mcp.ClientSession{"alice": a, "bob": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ask, Arguments: map[string]any{"question": "who is " + who + "?"}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				got[who] = "error: " + err.Error()
				return
			}
			got[who] = res.Content[0].(*mcp.TextContent).Text
		}()
	}
	wg.Wait()
	for _, who := range []string{"alice", "bob"} {
		if want := "answer: I am " + who; got[who] != want {
			t.Errorf("%s got %q, want %q", who, got[who], want)
		}
		if q, _ := asked.Load(who); q != "who is "+who+"?" {
			t.Errorf("%s was asked %q", who, q)
		}
	}
}

// TestFaceCancellation: a client's cancellation ends its own call upstream
// and no other.
func TestFaceCancellation(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	sleep := toolNamed(t, tools(t, e), "example", "sleep").Name
	a := httpFace(t, base+"/mcp", token, nil)
	b := httpFace(t, base+"/mcp", token, nil)

	bDone := make(chan string, 1)
	go func() {
		res, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 2000}})
		if err != nil {
			bDone <- "error: " + err.Error()
			return
		}
		bDone <- res.Content[0].(*mcp.TextContent).Text
	}()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := a.CallTool(ctx, &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 60000}})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled call: %v after %s", err, time.Since(start))
	}
	if got := <-bDone; got != "slept 2000 ms" {
		t.Errorf("the other client's call: %q", got)
	}
	// The cancellation reached the server: its sleep stopped (it says so
	// on stderr), once — the other client's call ran to its end.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := e.MustRun("logs", "example")
		if n := strings.Count(out, "sleep cancelled"); n == 1 {
			break
		} else if n > 1 || time.Now().After(deadline) {
			t.Fatalf("want one cancelled sleep upstream, logs:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// And a new call is answered at once.
	if got := textOf(t)(a.CallTool(t.Context(), &mcp.CallToolParams{Name: sleep, Arguments: map[string]any{"ms": 1}})); got != "slept 1 ms" {
		t.Errorf("after cancel: %q", got)
	}
}

// TestFaceRoots: a server asks for roots in the middle of a call and gets
// the roots of the client that made the call — through a 2026-07-28
// server (in its result) and through a session-era one (a roots/list
// request on the connection), to clients of both eras (a 2026-07-28 one
// in the call's result).
func TestFaceRoots(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	addOldServer(t, e)
	all := tools(t, e)
	for _, server := range []string{"example", "old"} {
		tool := toolNamed(t, all, server, "roots").Name
		for _, era := range []string{"", "2025-11-25"} {
			c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil)
			c.AddRoots(&mcp.Root{URI: "file:///work/" + server + era, Name: "work"})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}},
				&mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			// A session-era server asking a 2026-07-28 client mid-call: the
			// client is asked in the call's result (input_required), and
			// its retry carries the answer to the server.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
			if got, want := textOf(t)(res, err), "file:///work/"+server+era; got != want {
				t.Errorf("server %s, client era %q: roots %q, want %q", server, era, got, want)
			}
			cs.Close()
			cancel()
		}
	}
}
