package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// Peers the project's own servers are not: the TypeScript peer
// (testenv/tspeer) and the go-sdk's conformance server, behind Plexus, driven
// by the official TypeScript and Go SDK clients.

// peerServer is one server a peer test puts behind Plexus: added by URL or
// command (args), with extra settings (JSON members) merged into its entry,
// and a bare profile of the same name.
type peerServer struct {
	name     string
	args     []string
	settings string
}

// peerEnv starts a daemon with the servers given, each in a bare profile of
// its name, and returns it with the face's base URL and token.
func peerEnv(t *testing.T, servers ...peerServer) (*testenv.Env, string, string) {
	t.Helper()
	e := testenv.New(t)
	e.StartDaemon()
	for _, s := range servers {
		e.MustRun(append([]string{"add", s.name}, s.args...)...)
	}
	p := filepath.Join(e.Home, "extensions.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	var profiles []string
	for _, s := range servers {
		if s.settings != "" {
			cfg = strings.Replace(cfg, `"`+s.name+`": {`, `"`+s.name+`": {`+s.settings+`,`, 1)
		}
		profiles = append(profiles, fmt.Sprintf(`%q: {"servers": [%q], "naming": "bare"}`, s.name, s.name))
	}
	cfg = strings.Replace(cfg, `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true}, "profiles": {`+strings.Join(profiles, ", ")+`},`, 1)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.Run("", "reload"); r.Code != 0 {
		t.Fatalf("plexus reload with %s:\n%s%s", cfg, r.Stdout, r.Stderr)
	}
	_, base, token := faceURL(t, e)
	return e, base, token
}

// longSession runs testenv/tspeer/longsession.ts with args and returns its
// step lines; it fails the test for every step that failed.
func longSession(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	return runLongSession(t, "longsession.ts", env, args...)
}

// runLongSession is longSession with the script given (the session era's
// longsession.ts, or longsession2026.ts).
func runLongSession(t *testing.T, script string, env []string, args ...string) []string {
	t.Helper()
	cmd := testenv.TSPeerCommand(t, script, args...)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	out, err := cmd.Output()
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if strings.HasPrefix(line, "FAIL ") {
			t.Errorf("long session: %s", line)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("longsession.ts: %v\n%s\n%s", err, out, stderr.String())
	}
	t.Logf("long session %v:\n%s", args, out)
	return lines
}

// TestLongSession: after 100 calls on one session, the server's
// elicitation, sampling and roots requests — on the call's own stream and
// on the standalone GET stream — reach the TypeScript SDK client with their
// fields intact and are answered, through both faces, in both session-era
// protocol versions.
func TestLongSession(t *testing.T) {
	t.Parallel()
	needConformance(t)
	peer := testenv.StartTSPeer(t)
	e, base, token := peerEnv(t, peerServer{name: "ts", args: []string{peer}})
	t.Run("fresh-session", func(t *testing.T) {
		// The control: the same elicitation with no call before it.
		longSession(t, nil, "--url", base+"/mcp/ts", "--token", token, "--calls", "0", "--steps", "elicitation", "--step-timeout", "5000")
	})
	steps := "elicitation,sampling,roots,standalone_elicitation,standalone_sampling,standalone_roots"
	for _, protocol := range []string{"2025-11-25", "2025-06-18"} {
		common := []string{"--calls", "100", "--protocol", protocol, "--step-timeout", "5000", "--steps", steps}
		t.Run("http/"+protocol, func(t *testing.T) {
			longSession(t, nil, append([]string{"--url", base + "/mcp/ts", "--token", token}, common...)...)
		})
		t.Run("stdio/"+protocol, func(t *testing.T) {
			longSession(t, []string{"PLEXUS_HOME=" + e.Home}, append([]string{"--stdio", e.Bin + " mcp --profile ts"}, common...)...)
		})
	}
}

// TestLongSession2026: the long session in the MCP 2026-07-28 era — no
// protocol session, one client on one connection — driven by the
// TypeScript SDK's v2 client pinned to 2026-07-28: after 100 calls, the
// 2026 server's elicitation, sampling and roots, asked within the call's
// result (input_required) and answered by the client's retry, pass
// through both faces as they pass directly.
func TestLongSession2026(t *testing.T) {
	t.Parallel()
	needConformance(t)
	peer := testenv.StartTSPeer2026(t)
	e, base, token := peerEnv(t, peerServer{name: "ts26", args: []string{peer}})
	common := []string{"--calls", "100", "--step-timeout", "5000", "--steps", "elicitation,sampling,roots"}
	t.Run("direct", func(t *testing.T) {
		// The control: the same session with no Plexus between.
		runLongSession(t, "longsession2026.ts", nil, append([]string{"--url", peer}, common...)...)
	})
	t.Run("http", func(t *testing.T) {
		runLongSession(t, "longsession2026.ts", nil, append([]string{"--url", base + "/mcp/ts26", "--token", token}, common...)...)
	})
	t.Run("stdio", func(t *testing.T) {
		runLongSession(t, "longsession2026.ts", []string{"PLEXUS_HOME=" + e.Home}, append([]string{"--stdio", e.Bin + " mcp --profile ts26"}, common...)...)
	})
}

// sessionEra pins a Go SDK client to the session era: server→client
// requests need a session.
var sessionEra = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// connTracker dials for an HTTP client and can drop every connection it
// made at once, as a client that goes away does.
type connTracker struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *connTracker) dropAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
}

// goingAway is a client with an elicitation pending that then disappears
// without a word: its connections dropped (HTTP face) or its `plexus mcp`
// killed (stdio face).
func goingAway(t *testing.T, e *testenv.Env, face, url, token string) {
	t.Helper()
	asked := make(chan struct{})
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c := mcp.NewClient(&mcp.Implementation{Name: "going-away", Version: "1"}, opts)
	var transport mcp.Transport
	var gone func()
	switch face {
	case "http":
		tr := &connTracker{}
		hc := &http.Client{Transport: bearer{token: token, base: &http.Transport{DialContext: tr.dial}}}
		transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}
		gone = tr.dropAll
	case "stdio":
		cmd := exec.Command(e.Bin, "mcp", "--profile", path.Base(url))
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		transport = testenv.Transport(t, cmd)
		gone = func() { cmd.Process.Kill() }
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, transport, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "never answered"}})
		if err != nil {
			ended <- err.Error()
			return
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		ended <- b.String()
	}()
	select {
	case <-asked:
	case got := <-ended:
		t.Fatalf("the first client's call ended before it was asked: %s", got)
	case <-ctx.Done():
		t.Fatal("the first client was never asked")
	}
	gone()
}

// TestClientGoneMidElicitation: a client that goes away with an
// elicitation pending must not hold up the next one — another client's
// elicitation on the same server arrives within a second and is answered.
func TestClientGoneMidElicitation(t *testing.T) {
	// Not parallel: the other client must be asked within 1 s.
	needConformance(t)
	fixture := everythingServer(t)
	peer := testenv.StartTSPeer(t)
	servers := map[string]peerServer{
		"ts":      {name: "ts", args: []string{peer}},
		"gostdio": {name: "gostdio", args: []string{"--", fixture}, settings: `"protocolVersion": "2025-11-25"`},
	}
	for _, server := range []string{"ts", "gostdio"} {
		for _, face := range []string{"http", "stdio"} {
			t.Run(server+"/"+face, func(t *testing.T) {
				// A daemon each: what one case leaves behind is not the next one's problem.
				e, base, token := peerEnv(t, servers[server])
				url := base + "/mcp/" + server
				goingAway(t, e, face, url, token)
				start := time.Now()
				var askedAfter time.Duration
				c := mcp.NewClient(&mcp.Implementation{Name: "staying", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					askedAfter = time.Since(start)
					return &mcp.ElicitResult{Action: "accept", Content: answerSchema(req.Params.RequestedSchema, "still here")}, nil
				}})
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}}, sessionEra)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				start = time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "are you there?"}})
				switch {
				case err != nil:
					t.Fatalf("the other client's elicitation failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
				case res.IsError:
					t.Fatalf("the other client's elicitation failed after %s: %s", time.Since(start).Round(time.Millisecond), textOfResult(t, res, nil))
				case askedAfter == 0 || askedAfter > time.Second:
					t.Errorf("the other client was asked after %s, want within 1s", askedAfter)
				}
				if got := textOfResult(t, res, nil); !strings.Contains(got, "still here") {
					t.Errorf("the elicitation's answer did not reach the server: %q", got)
				}
				t.Logf("asked after %s", askedAfter.Round(time.Millisecond))
			})
		}
	}
}

// TestIdle2026Upstream: a server on MCP 2026-07-28 over streamable HTTP
// stays ready and callable after more than ten keep-alive intervals: each
// era's keep-alive is sent as that era defines it, and an idle server is not
// lost. Two such servers: the go-sdk's conformance server (stateless), and
// the TypeScript peer as a strict 2026 server, which refuses every request
// without the 2026 envelope and has no ping method. The interval is the
// server setting keepAliveMs.
func TestIdle2026Upstream(t *testing.T) {
	t.Parallel()
	needConformance(t)
	// Each health check may take half the interval before it counts as
	// missed (three missed in a row lose the server): long enough for a
	// loaded, race-built run, short enough to see eleven.
	const interval = 500 * time.Millisecond
	upstreams := []struct{ name, url, tool string }{
		{"go26", startHTTPFixture(t, everythingServer(t), true), "test_simple_text"},
		{"ts26", testenv.StartTSPeer2026(t), "test_simple_text"},
	}
	for _, up := range upstreams {
		t.Run(up.name, func(t *testing.T) {
			t.Parallel()
			// The keep-alives are counted on their way to the server, and the
			// status read once the twelfth has arrived (the eleventh answered
			// and taken), not after a pause that a loaded machine may not fill.
			proxied, posts := countingProxy(t, up.url)
			e, base, token := peerEnv(t, peerServer{name: up.name, args: []string{proxied},
				settings: fmt.Sprintf(`"keepAliveMs": %d`, interval.Milliseconds())})
			st := waitState(t, e, up.name, "ready", 15*time.Second)
			if st.ProtocolVersion != "2026-07-28" {
				t.Fatalf("the server negotiated %q, want 2026-07-28", st.ProtocolVersion)
			}
			before := posts.Load()
			waitFor(t, 60*time.Second, "twelve keep-alives", func() bool { return posts.Load()-before >= 12 })
			st = servers(t, e)[up.name]
			if st.State != "ready" || st.Restarts != 0 || st.LastError != "" {
				t.Errorf("after %d keep-alive intervals the server is %s (restarts %d, last error %q)", 11, st.State, st.Restarts, st.LastError)
			}
			for _, era := range []*mcp.ClientSessionOptions{nil, sessionEra} {
				c := mcp.NewClient(&mcp.Implementation{Name: "idle-check", Version: "1"}, nil)
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/" + up.name, HTTPClient: &http.Client{Transport: bearer{token: token}}}, era)
				if err != nil {
					cancel()
					t.Fatal(err)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: up.tool})
				if err != nil || res.IsError {
					t.Errorf("calling the idle server (client offering %v): %v %v", era, err, res)
				}
				cs.Close()
				cancel()
			}
		})
	}
}

// TestMCPBridgePipelined: a client that writes initialize,
// notifications/initialized and tools/list to `plexus mcp` without waiting
// between them gets its tools every time: what a client wrote after a
// notification never overtakes it.
func TestMCPBridgePipelined(t *testing.T) {
	t.Parallel()
	bin := testenv.Binary(t)
	e, _, _ := peerEnv(t, peerServer{name: "example", args: []string{"--", bin, "example-server"}})
	msgs := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`
	const runs = 30
	var failures []string
	for i := range runs {
		cmd := exec.Command(e.Bin, "mcp", "--profile", "example")
		cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := testenv.Start(t, cmd); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, msgs)
		got := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result *struct {
						Tools []struct{ Name string } `json:"tools"`
					} `json:"result"`
					Error json.RawMessage `json:"error"`
				}
				if json.Unmarshal(sc.Bytes(), &m) == nil && string(m.ID) == "2" {
					switch {
					case m.Result != nil && len(m.Result.Tools) > 0:
						got <- ""
					default:
						got <- sc.Text()
					}
					return
				}
			}
			got <- "stdout ended without an answer to tools/list"
		}()
		select {
		case bad := <-got:
			if bad != "" {
				failures = append(failures, fmt.Sprintf("run %d: %s", i, bad))
			}
		case <-time.After(10 * time.Second):
			failures = append(failures, fmt.Sprintf("run %d: no answer to tools/list within 10s", i))
		}
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d pipelined sessions did not get their tools:\n%s", len(failures), runs, strings.Join(failures, "\n"))
	}
}

// answerSchema is an answer to an elicitation that fits its schema: text
// in every string property the schema names, and "response" besides.
func answerSchema(schema any, text string) map[string]any {
	out := map[string]any{"response": text}
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(b, &s)
	for name, p := range s.Properties {
		switch p.Type {
		case "string", "":
			out[name] = text
		case "boolean":
			out[name] = true
		case "number", "integer":
			out[name] = 1
		}
	}
	return out
}
