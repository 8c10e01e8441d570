package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestAuditRecordsEveryKind: through a real daemon, a client of the face
// (named, versioned) calls a tool, reads a resource and gets a prompt, the
// CLI calls a tool and changes settings: each is a record of the audit
// log with who, what, outcome, duration and sizes. Planted argument
// values and a server's secret are in no record, no API answer and no
// CLI output — except, for the one server whose settings ask for its
// payloads, its arguments with the secret and the secret-named member
// redacted. The file is 0600; filters and following work; under
// concurrent calls the files rotate within their bounds, whole lines only.
func TestAuditRecordsEveryKind(t *testing.T) {
	t.Parallel()
	const (
		argCanary    = "CANARY-arg-4f1e"
		promptCanary = "CANARY-prompt-9a2c"
		secret       = "CANARY-secret-77b0d"
		keyCanary    = "CANARY-apikey-5e3a"
	)
	e := testenv.New(t)
	// Small bounds, for the rotation under load at the end.
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(`{"mcp": {"audit": {"maxFileBytes": 8192, "maxFiles": 3}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	if r := e.Run(secret+"\n", "secret", "set", "EX_TOKEN"); r.Code != 0 {
		t.Fatalf("secret set: %+v", r)
	}
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	e.MustRun("add", "plain", "--env", "TOKEN=EX_TOKEN", "--", e.Bin, "example-server")
	c := client.New(e.Home)
	loud, _ := json.Marshal(map[string]any{"type": "stdio", "command": e.Bin, "args": []string{"example-server"},
		"env": map[string]any{"TOKEN": map[string]string{"env": "EX_TOKEN"}}, "auditPayloads": true})
	if _, err := c.AddServer(t.Context(), apitype.PutServerRequest{Name: "loud", Config: loud}, 0); err != nil {
		t.Fatal(err)
	}
	waitState(t, e, "plain", "ready", 20*time.Second)
	waitState(t, e, "loud", "ready", 20*time.Second)

	// Follow from here: the records of the calls below arrive on it.
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	follow, err := c.FollowAudit(ctx, url.Values{"server": {"plain"}, "kind": {"tools/call"}})
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()

	_, base, token := faceURL(t, e)
	mc := mcp.NewClient(&mcp.Implementation{Name: "audit-agent", Version: "3.1"}, nil)
	cs, err := mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	plainEcho := toolNamed(t, tools(t, e), "plain", "echo").Name
	loudEcho := toolNamed(t, tools(t, e), "loud", "echo").Name
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: plainEcho, Arguments: map[string]any{"text": argCanary}})
	mustContain(t, "call", textOfResult(t, res, err), argCanary)
	// The tool refuses the extra member (a tool error): its arguments
	// are recorded all the same.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: loudEcho, Arguments: map[string]any{"text": "x " + secret, "api_key": keyCanary}}); err != nil {
		t.Fatal(err)
	}
	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) == 0 {
		t.Fatalf("resources: %v %v", rl, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: rl.Resources[0].URI}); err != nil {
		t.Fatal(err)
	}
	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) == 0 {
		t.Fatalf("prompts: %v %v", pl, err)
	}
	prompt := ""
	for _, p := range pl.Prompts {
		if strings.Contains(p.Name, "plain") {
			prompt = p.Name
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"text": promptCanary}}); err != nil {
		t.Fatal(err)
	}
	e.MustRun("call", plainEcho, `{"text":"`+argCanary+`"}`)

	// The follower saw the face's call of plain's tool, with its client.
	rec, err := follow.Next()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Server != "plain" || rec.Tool != "echo" || rec.Client != "audit-agent" || rec.ClientVersion != "3.1" || rec.Outcome != "ok" {
		t.Errorf("followed record: %+v", rec)
	}

	var recs []apitype.AuditRecord
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, err := c.Audit(t.Context(), url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		recs = out.Records
		// Wait for the last of them, the CLI's call, not for a count:
		// the settings changes alone may reach any count first.
		calls := 0
		for _, r := range recs {
			if r.Kind == "tools/call" {
				calls++
			}
		}
		if calls >= 3 || time.Now().After(deadline) {
			break
		}
	}
	kinds := map[string][]apitype.AuditRecord{}
	for _, r := range recs {
		kinds[r.Kind] = append(kinds[r.Kind], r)
	}
	var faceCall, cliCall, loudCall *apitype.AuditRecord
	for i, r := range kinds["tools/call"] {
		switch {
		case r.Server == "plain" && r.Client == "audit-agent":
			faceCall = &kinds["tools/call"][i]
		case r.Server == "plain":
			cliCall = &kinds["tools/call"][i]
		case r.Server == "loud":
			loudCall = &kinds["tools/call"][i]
		}
	}
	if faceCall == nil || cliCall == nil || loudCall == nil {
		t.Fatalf("tool calls recorded: %+v", kinds["tools/call"])
	}
	if faceCall.Name != plainEcho || faceCall.Session == "" || faceCall.Ms <= 0 || faceCall.ArgBytes == 0 || faceCall.ResultBytes == 0 || faceCall.Arguments != nil || faceCall.Result != nil {
		t.Errorf("the face's call: %+v", *faceCall)
	}
	if cliCall.Outcome != "ok" || cliCall.ArgBytes == 0 {
		t.Errorf("the CLI's call: %+v", *cliCall)
	}
	args := string(loudCall.Arguments)
	if !strings.Contains(args, `"text":"x [redacted]"`) || !strings.Contains(args, `"api_key":"[redacted]"`) || loudCall.Result == nil || loudCall.Outcome != "tool_error" {
		t.Errorf("the payload of the server that asks for it: arguments %s, result %s", args, loudCall.Result)
	}
	if r := kinds["resources/read"]; len(r) != 1 || r[0].Tool == "" || r[0].Client != "audit-agent" || r[0].ResultBytes == 0 {
		t.Errorf("resource reads: %+v", r)
	}
	if r := kinds["prompts/get"]; len(r) != 1 || r[0].Tool != "summarize" || r[0].Server != "plain" || r[0].ArgBytes == 0 || r[0].Arguments != nil {
		t.Errorf("prompt gets: %+v", r)
	}
	var sawSettings, sawAdd bool
	for _, r := range kinds["settings"] {
		sawSettings = sawSettings || (r.Tool == "PUT /settings" && r.Outcome == "ok")
		sawAdd = sawAdd || (r.Tool == "POST /servers" && r.Outcome == "ok")
	}
	if !sawSettings || !sawAdd {
		t.Errorf("settings changes: %+v", kinds["settings"])
	}

	// Its switches through `plexus settings` keep the file's bounds.
	e.MustRun("settings", "set", "audit.otlp", "true")
	if v := strings.TrimSpace(e.MustRun("settings", "get", "audit.otlp")); v != "true" {
		t.Errorf("audit.otlp reads %q after set", v)
	}
	e.MustRun("settings", "unset", "audit.otlp")
	if cfg, _ := os.ReadFile(filepath.Join(e.Home, "extensions.json")); !strings.Contains(string(cfg), `"maxFileBytes": 8192`) || strings.Contains(string(cfg), `"otlp"`) {
		t.Errorf("mcp.audit after set and unset of audit.otlp:\n%s", cfg)
	}

	// Off and on again, without a restart: a call made while it is off
	// is not recorded, one made after is.
	plainCalls := func() (int, bool) {
		out, err := c.Audit(t.Context(), url.Values{"server": {"plain"}, "kind": {"tools/call"}, "limit": {"1000"}})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Records), out.Off
	}
	n0, _ := plainCalls()
	e.MustRun("settings", "set", "audit.enabled", "false")
	if n, off := plainCalls(); !off || n != 0 {
		t.Errorf("audit.enabled false: the API says off %v, %d records", off, n)
	}
	e.MustRun("call", plainEcho, `{"text":"while-off"}`)
	e.MustRun("settings", "set", "audit.enabled", "true")
	e.MustRun("call", plainEcho, `{"text":"on-again"}`)
	got := n0
	for deadline := time.Now().Add(10 * time.Second); got < n0+1 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got, _ = plainCalls()
	}
	time.Sleep(100 * time.Millisecond)
	if got, _ = plainCalls(); got != n0+1 {
		t.Errorf("off, a call, on, a call: %d more records of plain's calls, want 1", got-n0)
	}

	// Filters, through the CLI.
	out := e.MustRun("audit", "--server", "loud", "--json")
	if n := strings.Count(out, "\n"); n == 0 || strings.Count(out, `"server":"loud"`) != n {
		t.Errorf("audit --server loud: %s", out)
	}
	human := e.MustRun("audit", "--kind", "tools/call")
	mustContain(t, "audit", human, "client=audit-agent/3.1")

	// The canaries: nowhere but where a server's settings put them, and
	// then redacted.
	apiAll, _ := json.Marshal(recs)
	file, err := os.ReadFile(filepath.Join(e.Home, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(e.Home, "audit.jsonl")); m != 0o600 {
		t.Errorf("audit.jsonl mode %o", m)
	}
	for what, text := range map[string]string{"audit.jsonl": string(file), "GET /v1/audit": string(apiAll),
		"plexus audit --json": e.MustRun("audit", "--json"), "plexus audit": e.MustRun("audit")} {
		for _, canary := range []string{argCanary, promptCanary, secret, keyCanary} {
			if strings.Contains(text, canary) {
				t.Errorf("%s holds the planted value %s", what, canary)
			}
		}
	}

	// Rotation under load: concurrent calls through the face pass the
	// files' bounds many times over; they stay within them, each line
	// whole, the newest records kept.
	n := 20
	if testing.Short() {
		n = 8
	}
	errs := make(chan error, 8*n)
	for g := range 8 {
		go func() {
			for i := range n {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: plainEcho, Arguments: map[string]any{"text": strings.Repeat("x", g*10+i)}})
				errs <- err
			}
		}()
	}
	for range 8 * n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	e.MustRun("call", plainEcho, `{"text":"the last"}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, err := c.Audit(t.Context(), url.Values{"limit": {"1"}, "kind": {"tools/call"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Records) == 1 && out.Records[0].ArgBytes == len(`{"text":"the last"}`) {
			if out.Dropped != 0 {
				t.Errorf("%d records dropped", out.Dropped)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last call is not the newest record: %+v", out.Records)
		}
	}
	files, _ := filepath.Glob(filepath.Join(e.Home, "audit.jsonl*"))
	if len(files) != 3 {
		t.Errorf("audit files %v, want 3", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 8192 || len(b) == 0 || b[len(b)-1] != '\n' {
			t.Errorf("%s: %d bytes, bound 8192, ends in a newline: %v", f, len(b), len(b) > 0 && b[len(b)-1] == '\n')
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				t.Errorf("%s: torn line %q", f, line)
			}
		}
	}
}
