//lint:file-ignore SA1019 a fake Peer implements Log, whose params type MCP 2026-07-28 deprecates.

package host

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// askingPeer is a client that answers every elicitation with answer, and
// counts the questions.
type askingPeer struct {
	answer  string // "accept", "decline"
	caps    *mcp.ClientCapabilities
	session any // nil: a stateless caller
	asked   atomic.Int32
	last    atomic.Value
}

func (p *askingPeer) Ask(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.asked.Add(1)
	p.last.Store(string(params))
	return json.RawMessage(`{"action":"` + p.answer + `"}`), nil
}
func (p *askingPeer) Progress(context.Context, *mcp.ProgressNotificationParams) {}
func (p *askingPeer) Log(context.Context, *mcp.LoggingMessageParams)            {}
func (p *askingPeer) Capabilities() *mcp.ClientCapabilities                     { return p.caps }
func (p *askingPeer) Client() any                                               { return p.session }

var elicits = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}

// reached reports whether the traced example server read a call whose
// arguments hold mark.
func (th *testHost) reached(mark string) bool {
	return slices.ContainsFunc(th.status("ex").Stderr, func(l string) bool {
		return strings.HasPrefix(l, "read: ") && strings.Contains(l, `"tools/call"`) && strings.Contains(l, mark)
	})
}

func (th *testHost) setPolicy(p *config.Policy) {
	th.t.Helper()
	if _, err := th.SetSettings(Settings{Policy: p}, 0); err != nil {
		th.t.Fatal(err)
	}
}

// TestGate drives the gate through the host's call paths: a rule denies,
// a limit refuses with the time to wait, an approval is asked of the
// calling client — and a refused call never reaches the server.
func TestGate(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.tracedExample(nil))
	echo := catalog.ReadableName("ex", "echo")
	th.setPolicy(&config.Policy{
		Rules: []config.PolicyRule{
			{Tool: echo, Client: "bad-*", Action: config.PolicyDeny},
			{Tool: echo, Client: "careful", Action: config.PolicyAskOnce},
			{Tool: echo, Client: "very-careful", Action: config.PolicyAskEvery},
		},
		Limits: []config.RateLimit{{Tool: strings.TrimSuffix(catalog.ReadableName("ex", "sha256"), "256") + "*", Calls: 2, WindowMs: 600000}},
	})
	sess, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer th.EndSession(sess.ID)
	as := func(client string, peer upstream.Peer) context.Context {
		ctx := audit.WithClient(t.Context(), audit.Client{Name: client, Profile: "default"})
		if peer != nil {
			ctx = upstream.WithPeer(ctx, peer, nil)
		}
		return ctx
	}
	call := func(ctx context.Context, tool, mark string) *mcp.CallToolResult {
		t.Helper()
		res, err := sess.Call(ctx, tool, json.RawMessage(`{"text": "`+mark+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	refused := func(res *mcp.CallToolResult, marker, mark string, says ...string) {
		t.Helper()
		if kind, _ := metaOf(res); !res.IsError || kind != marker {
			t.Errorf("%s: got %+v, want an error result marked %s", mark, res, marker)
		}
		for _, s := range says {
			if !strings.Contains(resultText(res), s) {
				t.Errorf("%s: %q does not say %q", mark, resultText(res), s)
			}
		}
		if th.reached(mark) {
			t.Errorf("%s: the refused call reached the server", mark)
		}
	}
	sent := func(res *mcp.CallToolResult, mark string) {
		t.Helper()
		if res.IsError || !strings.Contains(resultText(res), mark) {
			t.Errorf("%s: got %+v, want the server's answer", mark, res)
		}
	}

	refused(call(as("bad-bot", nil), echo, "deny-1"), markDenied, "deny-1", "mcp.policy.rules[0]", "not sent")
	sent(call(as("good-bot", nil), echo, "allow-1"), "allow-1")

	// Rate limits: two calls, then a refusal that says when.
	sha := catalog.ReadableName("ex", "sha256")
	for i := range 2 {
		if res := call(as("a", nil), sha, "limit-ok"); res.IsError {
			t.Fatalf("call %d within the limit: %+v", i, res)
		}
	}
	res := call(as("a", nil), sha, "limit-3")
	refused(res, markRateLimited, "limit-3", `"a" may make 2 calls per 10m0s`, "try again in 5m0s (retry after ")
	if ms, _ := res.Meta[MetaRetryAfterMs].(int64); ms < 290000 || ms > 300000 {
		t.Errorf("retryAfterMs = %v, want 5 minutes less the time the test took", res.Meta[MetaRetryAfterMs])
	}
	if res := call(as("b", nil), sha, "limit-b"); res.IsError {
		t.Errorf("client b is limited by a's calls: %+v", res)
	}

	// Approvals through the client: declined, not sent; approved once per
	// session, asked once; every call, asked every time.
	no := &askingPeer{answer: "decline", caps: elicits, session: sess}
	refused(call(as("careful", no), echo, "declined-1"), markDeclined, "declined-1", "did not approve")
	once := &askingPeer{answer: "accept", caps: elicits, session: sess}
	sent(call(as("careful", once), echo, "once-1"), "once-1")
	sent(call(as("careful", once), echo, "once-2"), "once-2")
	if n := once.asked.Load(); n != 1 {
		t.Errorf("askOncePerSession asked %d times in one session, want 1", n)
	}
	q, _ := once.last.Load().(string)
	if !strings.Contains(q, `text=\"once-1\"`) || !strings.Contains(q, `\"echo\" of the server \"ex\"`) {
		t.Errorf("the question %s does not name the tool and summarise the arguments", q)
	}
	stateless := &askingPeer{answer: "accept", caps: elicits}
	sent(call(as("careful", stateless), echo, "stateless-1"), "stateless-1")
	sent(call(as("careful", stateless), echo, "stateless-2"), "stateless-2")
	if n := stateless.asked.Load(); n != 2 {
		t.Errorf("a caller without a session was asked %d times for 2 calls, want 2", n)
	}
	// A stateless caller through a bridge (its scope) is asked once for
	// that bridge and client name; another bridge, or another client on
	// the same one, is asked again.
	bridged := &askingPeer{answer: "accept", caps: elicits}
	scoped := func(client, scope string) context.Context { return WithApprovalScope(as(client, bridged), scope) }
	sent(call(scoped("careful", "bridge-1"), echo, "bridged-1"), "bridged-1")
	sent(call(scoped("careful", "bridge-1"), echo, "bridged-2"), "bridged-2")
	sent(call(scoped("careful", "bridge-2"), echo, "bridged-3"), "bridged-3")
	if n := bridged.asked.Load(); n != 2 {
		t.Errorf("a stateless caller asked %d times for 2 calls through one bridge and 1 through another, want 2", n)
	}
	every := &askingPeer{answer: "accept", caps: elicits, session: sess}
	sent(call(as("very-careful", every), echo, "every-1"), "every-1")
	sent(call(as("very-careful", every), echo, "every-2"), "every-2")
	if n := every.asked.Load(); n != 2 {
		t.Errorf("askEveryCall asked %d times for 2 calls, want 2", n)
	}

	// A client that cannot be asked, and a caller with no client at all
	// (the settings API), wait for the user elsewhere (the web page,
	// plexus approve): approved, refused, or nobody in time — then
	// refused with what to do.
	th.opts.ApprovalWait = 300 * time.Millisecond
	mute := &askingPeer{answer: "accept", caps: &mcp.ClientCapabilities{}, session: sess}
	refused(call(as("very-careful", mute), echo, "mute-1"), markNeedsOK, "mute-1", "cannot be asked", "supports elicitation", "plexus approve --call call-", "nobody approved it in time")
	if mute.asked.Load() != 0 {
		t.Error("a client without elicitation was asked")
	}
	refused(call(as("very-careful", nil), echo, "api-1"), markNeedsOK, "api-1", "cannot be asked")
	if n := len(th.Approvals()); n != 0 {
		t.Errorf("%d calls still wait after giving up", n)
	}
	th.opts.ApprovalWait = time.Minute
	decide := func(approve bool) {
		for {
			if w := th.Approvals(); len(w) == 1 {
				if w[0].Name != echo || w[0].Client != "very-careful" || w[0].Rule != "mcp.policy.rules[2]" || w[0].Arguments == "" {
					t.Errorf("waiting: %+v", w[0])
				}
				if err := th.DecideCall(w[0].ID, approve); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	go decide(true)
	sent(call(as("very-careful", mute), echo, "approved-elsewhere"), "approved-elsewhere")
	go decide(false)
	refused(call(as("very-careful", nil), echo, "refused-elsewhere"), markDeclined, "refused-elsewhere", "did not approve")
	var nf *NotFoundError
	if err := th.DecideCall("call-nope", true); !errors.As(err, &nf) {
		t.Errorf("deciding an unknown call: %v", err)
	}

	// Every decision is recorded, with its reason.
	var decisions []string
	for _, r := range th.logs.records() {
		if r.msg == "call decided" {
			decisions = append(decisions, r.attrs["outcome"].(string)+" "+r.attrs["reason"].(string))
		}
	}
	want := []string{"denied mcp.policy.rules[0]", "rate_limited mcp.policy.limits[0]", "declined elicitation", "approved elicitation",
		"approved once-per-session", "approved elicitation", "approved elicitation",
		"approved elicitation", "approved once-per-session", "approved elicitation",
		"approved elicitation", "approved elicitation",
		"refused mcp.policy.rules[2]", "refused mcp.policy.rules[2]", "approved settings API", "declined settings API"}
	if !slices.Equal(decisions, want) {
		t.Errorf("decisions recorded:\n%q\nwant\n%q", decisions, want)
	}

	// Removing the policy lets everything through again, at once.
	th.setPolicy(&config.Policy{})
	sent(call(as("bad-bot", nil), echo, "after-1"), "after-1")
}

// TestGateOverReadsAndGets: a client's own resources/read and prompts/get
// pass the gate as the server's read_resource and get_prompt operations —
// one rule over the operation's name governs both ways — and a refused
// one never reaches the server: a JSON-RPC error that says why, with the
// gate's marker in its data.
func TestGateOverReadsAndGets(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.tracedExample(nil))
	th.setPolicy(&config.Policy{Rules: []config.PolicyRule{
		{Tool: catalog.OpName("ex", catalog.KindReadResource), Client: "bad-*", Action: config.PolicyDeny},
		{Tool: catalog.OpName("ex", catalog.KindGetPrompt), Client: "bad-*", Action: config.PolicyDeny},
		{Tool: "*", Client: "careful", Action: config.PolicyAskEvery},
	}})
	as := func(client string, peer upstream.Peer) context.Context {
		ctx := audit.WithClient(t.Context(), audit.Client{Name: client, Profile: "default"})
		if peer != nil {
			ctx = upstream.WithPeer(ctx, peer, nil)
		}
		return ctx
	}
	saw := func(method, mark string) bool {
		return slices.ContainsFunc(th.status("ex").Stderr, func(l string) bool {
			return strings.HasPrefix(l, "read: ") && strings.Contains(l, `"`+method+`"`) && strings.Contains(l, mark)
		})
	}
	// reached waits a little for the line: the server's stderr is read
	// apart from its answers.
	reached := func(method, mark string) bool {
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if saw(method, mark) {
				return true
			}
		}
		return false
	}
	refused := func(err error, marker, method, mark string) {
		t.Helper()
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != CodeRefused || !strings.Contains(string(je.Data), `"`+marker+`"`) || !strings.Contains(je.Message, "not sent") && marker == markDenied {
			t.Errorf("%s %s: %v, want a refusal marked %s", method, mark, err, marker)
		}
		if saw(method, mark) {
			t.Errorf("%s %s: the refused request reached the server", method, mark)
		}
	}
	const readme = "plexus://example/readme"
	_, err := th.ReadResource(as("bad-bot", nil), "ex", readme)
	refused(err, markDenied, "resources/read", readme)
	_, err = th.GetPrompt(as("bad-bot", nil), "ex", "summarize", map[string]string{"text": "deny-get"})
	refused(err, markDenied, "prompts/get", "deny-get")
	if _, err := th.GetPrompt(as("good-bot", nil), "ex", "summarize", map[string]string{"text": "allowed-get"}); err != nil || !reached("prompts/get", "allowed-get") {
		t.Errorf("an allowed prompts/get: %v, reached %v", err, reached("prompts/get", "allowed-get"))
	}

	// Asked like a call: the question names the prompt and its arguments.
	no := &askingPeer{answer: "decline", caps: elicits}
	_, err = th.GetPrompt(as("careful", no), "ex", "summarize", map[string]string{"text": "declined-get"})
	refused(err, markDeclined, "prompts/get", "declined-get")
	if q, _ := no.last.Load().(string); !strings.Contains(q, "summarize") || !strings.Contains(q, "declined-get") {
		t.Errorf("the question %s does not name the prompt and its arguments", q)
	}
	yes := &askingPeer{answer: "accept", caps: elicits}
	if _, err := th.ReadResource(as("careful", yes), "ex", readme); err != nil || yes.asked.Load() != 1 || !reached("resources/read", readme) {
		t.Errorf("an approved resources/read: %v, asked %d", err, yes.asked.Load())
	}
	// By now the server has read what came after the refusals: they did not come.
	if saw("prompts/get", "deny-get") || saw("prompts/get", "declined-get") {
		t.Error("a refused prompts/get reached the server")
	}
}
