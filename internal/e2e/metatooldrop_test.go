package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestDroppedPOSTCancelsUpstream: a client whose
// POST carrying a call goes away — the connection dropped, no
// notifications/cancelled — has cancelled that call, and the server
// upstream is told so, whether the call was a tool's own (a bare profile)
// or made through the call_tool meta-tool (a profile with metaTools), and
// whether or not its answer was a stream the client may resume (unless
// the client's standalone stream dropped with it: a network failure,
// after which the client may resume).
// The server is the matrix's go-sdk peer over stdio: its slow tool notes
// whether it saw its call cancelled or ran to the end.
func TestDroppedPOSTCancelsUpstream(t *testing.T) {
	t.Parallel()
	peer := testenv.PeerServer(t)
	e, base, token := peerEnv(t, peerServer{name: "peer", args: []string{"--", peer, "-sdk", "gosdk", "-transport", "stdio"}})
	e.MustRun("settings", "set", "profiles.meta", `{"servers":["peer"],"metaTools":true}`)
	slow := toolNamed(t, tools(t, e), "peer", "slow").Name

	// status asks the server, on a session of the bare profile, what its
	// slow tool noted under key.
	c := mcp.NewClient(&mcp.Implementation{Name: "status", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/peer", HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	status := func(key string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_status", Arguments: map[string]any{"key": key}})
		if err != nil {
			return err.Error()
		}
		return textOfResult(t, res, nil)
	}

	listening := 0 // the sessions whose standalone stream a subtest held open so far
	const ownCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"key":"KEY","steps":100,"ms":100}}}`
	for _, tc := range []struct {
		name, profile, call, version string
		// listen: the client holds its standalone stream open; cut: it
		// drops with the POST, as when the network fails.
		listen, cut bool
		want        string
	}{
		{name: "own-tool", profile: "peer", call: ownCall, version: "2025-06-18", want: "cancelled"},
		{name: "call_tool", profile: "meta", call: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"` + slow + `","arguments":{"key":"KEY","steps":100,"ms":100}}}}`, version: "2025-06-18", want: "cancelled"},
		// A 2025-11-25 call's answer is a stream the client may resume
		// (its priming event): the client that let it go with its
		// standalone stream still open, or that never opened one, cancelled
		// it, as the server itself would take it. Dropped with its stream,
		// it may be resumed: it runs on.
		{name: "primed", profile: "peer", call: ownCall, version: "2025-11-25", want: "cancelled"},
		{name: "primed-listening", profile: "peer", call: ownCall, version: "2025-11-25", listen: true, want: "cancelled"},
		{name: "primed-network-drop", profile: "peer", call: ownCall, version: "2025-11-25", listen: true, cut: true, want: "running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.name
			url := base + "/mcp/" + tc.profile
			id := rawPOST(t, url, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+tc.version+`","capabilities":{},"clientInfo":{"name":"dropper","version":"1"}}}`)
			rawPOST(t, url, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			lctx, cutStream := context.WithCancel(ctx)
			defer cutStream()
			if tc.listen {
				listening++
				req, _ := http.NewRequestWithContext(lctx, "GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", tc.version)
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("the standalone stream: %v %v", resp, err)
				}
				defer resp.Body.Close()
			}
			// The call's POST, dropped once the server has started.
			pctx, drop := context.WithCancel(ctx)
			req, _ := http.NewRequestWithContext(pctx, "POST", url, strings.NewReader(strings.ReplaceAll(tc.call, "KEY", key)))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", tc.version)
			done := make(chan struct{})
			primed := make(chan struct{}) // the answer's first event id: a stream the client may resume
			go func() {
				defer close(done)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				seen := false
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if !seen && strings.HasPrefix(sc.Text(), "id:") {
						seen = true
						close(primed)
					}
				}
			}()
			waitFor(t, 10*time.Second, "the slow call to start", func() bool { return status(key) == "running" })
			if tc.version == "2025-11-25" {
				select {
				case <-primed: // past the face's priming, read by the client, not a time that usually is
				case <-time.After(10 * time.Second):
					t.Fatal("the call's answer never became a stream with an event id")
				}
			}
			if tc.cut {
				cutStream()
				// A network failure drops both connections at once, and the
				// face reads the client's other connections a moment after
				// the POST's drop. Here the client's transport closes the
				// two one after the other, and a loaded machine may show the
				// face the POST's drop first by more than that moment: the
				// POST is dropped once the face has seen the stream go (its
				// log says so for each session whose stream dropped).
				waitFor(t, 30*time.Second, "the face to see the standalone stream drop", func() bool {
					return strings.Count(e.DaemonOutput(), "a session's client dropped its stream") >= listening
				})
			}
			streamGone := time.Now()
			drop()
			<-done
			// Looked at for 3 s; a call that runs on because its client may
			// resume (its stream dropped too) only until 2 s after that
			// stream's drop: the session waits dropGrace (3 s) for its
			// client to come back, then ends, and its calls with it.
			end := time.Now().Add(3 * time.Second)
			if tc.cut {
				end = streamGone.Add(2 * time.Second)
			}
			var got string
			for ; time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if got = status(key); got != "running" {
					break
				}
			}
			if got != tc.want {
				t.Errorf("after the client dropped the POST of a call through profile %s (%s), the server's call is %q, want %s", tc.profile, tc.name, got, tc.want)
			}
		})
	}
}

// rawPOST posts body to a profile's endpoint url on session id ("" for
// none), reads the answer whole, and returns the session id it names.
func rawPOST(t *testing.T, url, token, id, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s", body, resp.Status)
	}
	return resp.Header.Get("Mcp-Session-Id")
}
