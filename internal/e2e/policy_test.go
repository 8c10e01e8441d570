package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestPolicy: mcp.policy, set with `plexus settings`, governs the calls of
// clients through both faces (/mcp over HTTP, and `plexus mcp`) in both
// eras (MCP 2026-07-28 without a session, 2025-11-25 with one): a rule
// denies, a rate limit refuses and says when to try again, a rule asks
// the user through the client's elicitation — once per session where the
// client has one or comes through plexus mcp (the bridge process is its
// session), every call where it has neither — a declined call is
// refused, and the call of a client that cannot elicit waits for the user
// to approve or refuse it with plexus approve.
// The TypeScript SDK's clients of both eras approve too. (That a refused
// call never reaches its server is host's TestGate, against a server
// that traces what it reads.) A rule over a server's read_resource
// operation governs a client's own resources/read too.
func TestPolicy(t *testing.T) {
	t.Parallel()
	e, base, token := faceEnv(t, "")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	e.MustRun("settings", "set", "policy.rules", `[{"tool": "`+echo+`", "client": "deny-*", "action": "deny"},
		{"tool": "`+echo+`", "client": "ask-*", "action": "askOncePerSession"},
		{"tool": "*_read_resource_*", "client": "deny-*", "action": "deny"}]`)
	e.MustRun("settings", "set", "policy.limits", `[{"tool": "`+echo+`", "client": "limit-*", "calls": 1, "windowMs": 600000}]`)
	show := e.MustRun("settings", "show")
	mustContain(t, "settings show", show, `policy.rules[1]`)
	mustContain(t, "settings show", show, `"action":"askOncePerSession"`)
	mustContain(t, "settings show", show, `"windowMs":600000`)
	if r := e.Run("", "settings", "set", "policy.rules", `[{"tool": "[", "action": "maybe"}]`); r.Code == 0 || !strings.Contains(r.Stderr, "policy.rules[0].action") || !strings.Contains(r.Stderr, "policy.rules[0].tool") {
		t.Errorf("a bad rule: exit %d, stderr %s", r.Code, r.Stderr)
	}

	type connect func(t *testing.T, client, era string, opts *mcp.ClientOptions) *mcp.ClientSession
	faces := map[string]connect{
		"http": func(t *testing.T, client, era string, opts *mcp.ClientOptions) *mcp.ClientSession {
			return dial(t, client, era, opts, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}})
		},
		"stdio": func(t *testing.T, client, era string, opts *mcp.ClientOptions) *mcp.ClientSession {
			cmd := exec.Command(e.Bin, "mcp")
			cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
			return dial(t, client, era, opts, testenv.Transport(t, cmd))
		},
	}
	for face, conn := range faces {
		for era, version := range map[string]string{"2026": "", "2025": "2025-11-25"} {
			t.Run(face+"-"+era, func(t *testing.T) {
				t.Parallel()
				who := face + "-" + era
				call := func(cs *mcp.ClientSession, text string) *mcp.CallToolResult {
					t.Helper()
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": text}})
					if err != nil {
						t.Fatalf("%s: %v", text, err)
					}
					return res
				}
				refused := func(res *mcp.CallToolResult, says ...string) {
					t.Helper()
					if !res.IsError {
						t.Errorf("got %s, want a refusal", contentText(res))
					}
					for _, s := range says {
						if !strings.Contains(contentText(res), s) {
							t.Errorf("%q does not say %q", contentText(res), s)
						}
					}
				}

				denied := conn(t, "deny-"+who, version, nil)
				refused(call(denied, "a"), "mcp.policy.rules[0] denies it", "not sent")
				// A resource read directly is governed as the server's
				// read_resource operation.
				if _, err := denied.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "plexus://example/readme"}); err == nil || !strings.Contains(err.Error(), "mcp.policy.rules[2] denies it") {
					t.Errorf("resources/read by a denied client: %v", err)
				}

				cs := conn(t, "limit-"+who, version, nil)
				if res := call(cs, "b"); res.IsError {
					t.Errorf("the first call within the limit: %s", contentText(res))
				}
				res := call(cs, "c")
				refused(res, "rate limit", "try again in 10m0s (retry after ")
				if ms, _ := res.Meta["plexus/retryAfterMs"].(float64); ms < 590000 || ms > 600000 {
					t.Errorf("_meta plexus/retryAfterMs = %v, want about 600000", res.Meta["plexus/retryAfterMs"])
				}

				var asked atomic.Int32
				answering := func(action string) *mcp.ClientOptions {
					return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						if !strings.Contains(req.Params.Message, `"echo" of the server "example"`) || !strings.Contains(req.Params.Message, `text=`) {
							t.Errorf("the question: %s", req.Params.Message)
						}
						return &mcp.ElicitResult{Action: action, Content: map[string]any{}}, nil
					}}
				}
				cs = conn(t, "ask-"+who, version, answering("accept"))
				for _, text := range []string{"d", "e"} {
					if got := contentText(call(cs, text)); got != text {
						t.Errorf("an approved call: %q, want %q", got, text)
					}
				}
				want := int32(1) // once per session (through plexus mcp, its process is one)…
				if version == "" && face == "http" {
					want = 2 // …and every call for a client without one
				}
				if n := asked.Load(); n != want {
					t.Errorf("asked %d times for 2 calls, want %d", n, want)
				}
				refused(call(conn(t, "ask-no-"+who, version, answering("decline")), "f"), "did not approve", "decline")

				approveByURL(t, e, base, token, echo, func(client, answer string, urls chan<- *mcp.ElicitParams, done chan<- string) *mcp.ClientSession {
					return conn(t, client+who, version, &mcp.ClientOptions{
						Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
						ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
							urls <- req.Params
							return &mcp.ElicitResult{Action: answer}, nil
						},
						ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
							done <- req.Params.ElicitationID
						},
					})
				}, version != "")

				// A client that cannot be asked waits for the user, who
				// decides with plexus approve: approved in one era,
				// refused in the other.
				mute := conn(t, "ask-mute-"+who, version, nil)
				done := make(chan *mcp.CallToolResult, 1)
				go func() {
					res, err := mute.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "g"}})
					if err != nil {
						t.Error(err)
					}
					done <- res
				}()
				id := waitingCall(t, e, "ask-mute-"+who)
				if version == "" {
					mustContain(t, "plexus approve --call", e.MustRun("approve", "--call", id), "approved "+id)
					if res := <-done; res == nil || res.IsError || contentText(res) != "g" {
						t.Errorf("a call approved with plexus approve: %+v", res)
					}
				} else {
					mustContain(t, "plexus approve --call --deny", e.MustRun("approve", "--call", id, "--deny"), "refused "+id)
					if res := <-done; res != nil {
						refused(res, "did not approve")
					}
				}
			})
		}
	}

	// The TypeScript SDK's clients: 1.x holds a session and is asked once,
	// 2.x speaks 2026-07-28 and is asked for each call. (Four Node.js
	// processes: the plain run has them, the race run is short.)
	if testing.Short() {
		return
	}
	for lib, want := range map[string]int{"ts-sdk-1": 1, "ts-sdk-2": 2} {
		for _, answer := range []string{"accept", "decline"} {
			t.Run(lib+"-"+answer, func(t *testing.T) {
				t.Parallel()
				argv := testenv.PeerKitArgv(t, "approve.mjs", lib, base+"/mcp", token, "ask-"+lib+"-"+answer, echo, answer)
				out, err := exec.CommandContext(t.Context(), argv[0], argv[1:]...).Output()
				var got struct{ Asked, Calls []string }
				if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
					t.Fatalf("approve.mjs: %v %v: %s", err, jerr, out)
				}
				switch {
				case answer == "accept" && (len(got.Asked) != want || strings.Join(got.Calls, ",") != "first,second"):
					t.Errorf("approving: asked %d times (%q), calls %q; want %d questions and both calls made", len(got.Asked), got.Asked, got.Calls, want)
				case answer == "decline" && (len(got.Asked) != 2 || !strings.HasPrefix(got.Calls[0], "isError: plexus: the user did not approve")):
					t.Errorf("declining: asked %d times, calls %q; want each call asked and refused", len(got.Asked), got.Calls)
				}
			})
		}
	}
}

// approveByURL: a client that elicits only in URL mode (conn connects
// one that gives answer and reports what it is asked and told) is sent to
// the web page, where its call waits for the user: the URL names the call
// and carries no credential (the page's API refuses a browser that has
// not logged in), the user approves it (with plexus approve, which calls
// the API the page's buttons call) and a client with a session is told
// the elicitation is complete. A user who declines to open the page
// refuses the call at once.
func approveByURL(t *testing.T, e *testenv.Env, base, token, echo string, conn func(client, answer string, urls chan<- *mcp.ElicitParams, done chan<- string) *mcp.ClientSession, session bool) {
	t.Helper()
	urls, done := make(chan *mcp.ElicitParams, 4), make(chan string, 4)
	cs := conn("ask-url-", "accept", urls, done)
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "u"}})
		if err != nil {
			t.Error(err)
		}
		result <- res
	}()
	var q *mcp.ElicitParams
	select {
	case q = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the client was not sent to the web page")
	}
	id := strings.TrimPrefix(q.URL, base+"/?call=")
	if q.Mode != "url" || id == q.URL || strings.Contains(q.URL, token) || !strings.Contains(q.Message, `"echo" of the server "example"`) {
		t.Fatalf("the URL-mode elicitation: %+v", q)
	}
	if session && q.ElicitationID != id {
		t.Errorf("elicitationId %q, want the call's id %q", q.ElicitationID, id)
	}
	if res, err := http.Get(q.URL); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("GET the approval page: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	if res, err := http.Get(base + "/api/v1/approvals"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page's API without its login: %v %v, want 401", res, err)
	} else {
		res.Body.Close()
	}
	mustContain(t, "plexus approve --call", e.MustRun("approve", "--call", id), "approved "+id)
	if res := <-result; res == nil || res.IsError || contentText(res) != "u" {
		t.Errorf("a call approved on the page: %+v", res)
	}
	if session {
		select {
		case got := <-done:
			if got != id {
				t.Errorf("notifications/elicitation/complete for %q, want %q", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Error("no notifications/elicitation/complete after the decision")
		}
	}

	res, err := conn("ask-url-no-", "decline", urls, done).CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "v"}})
	if err != nil || !res.IsError || !strings.Contains(contentText(res), "did not open the approval page") {
		t.Errorf("declining to open the page: %v %+v", err, res)
	}
}

// waitingCall waits until `plexus approve --calls` lists a call of client
// and returns its id.
func waitingCall(t *testing.T, e *testenv.Env, client string) string {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var waiting []apitype.CallApproval
		if err := json.Unmarshal([]byte(e.MustRun("approve", "--calls", "--json")), &waiting); err != nil {
			t.Fatal(err)
		}
		for _, w := range waiting {
			if w.Client == client {
				return w.ID
			}
		}
	}
	t.Fatalf("no call of %s waits for approval", client)
	return ""
}

// dial connects an SDK client named client, of era (""; the newest), with
// opts, over tr.
func dial(t *testing.T, client, era string, opts *mcp.ClientOptions, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connecting %s: %v", client, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
