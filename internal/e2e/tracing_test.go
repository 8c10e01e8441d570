package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// otlpReceiver is an OTLP trace receiver on 127.0.0.1 that takes both
// transports on one port, OTLP/HTTP (protobuf) and OTLP/gRPC (HTTP/2
// without TLS), built on the official OTLP protobuf messages and gRPC
// service: it keeps every span it is sent, and how it came.
type otlpReceiver struct {
	url string

	mu    sync.Mutex
	spans []*tracepb.Span // guarded by mu
	posts int             // guarded by mu
	logs  []string        // the event names of the log records (audit), in order; guarded by mu
	grpc  map[string]bool // span ids (hex) that came over gRPC; guarded by mu
}

// traceService is the receiver's OTLP/gRPC trace service.
type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	r *otlpReceiver
}

func (s traceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	s.r.take(req, true)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

func (r *otlpReceiver) take(msg *coltrace.ExportTraceServiceRequest, overGRPC bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts++
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
			for _, sp := range ss.Spans {
				if overGRPC {
					r.grpc[hex.EncodeToString(sp.SpanId)] = true
				}
			}
		}
	}
}

func startOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{url: "http://" + ln.Addr().String(), grpc: map[string]bool{}}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, traceService{r: r})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.ProtoMajor == 2 && strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
			gs.ServeHTTP(w, req)
			return
		}
		if req.Method == http.MethodPost && req.URL.Path == "/v1/logs" {
			r.takeLogs(w, req)
			return
		}
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want a POST of protobuf to /v1/traces", http.StatusBadRequest)
			return
		}
		b, err := io.ReadAll(req.Body)
		var msg coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.take(&msg, false)
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); gs.Stop() })
	return r
}

// takeLogs keeps the event names of an OTLP/HTTP logs export.
func (r *otlpReceiver) takeLogs(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	var msg collogs.ExportLogsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rl := range msg.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				r.logs = append(r.logs, lr.EventName+" "+lr.Body.GetStringValue())
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// logsSaying waits until a log record says want; false after 10 s.
func (r *otlpReceiver) logsSaying(want string) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		got := strings.Join(r.logs, "\n")
		r.mu.Unlock()
		if strings.Contains(got, want) {
			return true
		}
	}
	return false
}

// trace waits for the spans of trace id (hex) until want of them came.
func (r *otlpReceiver) trace(t *testing.T, id string, want int) []*tracepb.Span {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var got []*tracepb.Span
		r.mu.Lock()
		for _, s := range r.spans {
			if hex.EncodeToString(s.TraceId) == id {
				got = append(got, s)
			}
		}
		r.mu.Unlock()
		if len(got) >= want || time.Now().After(end) {
			return got
		}
	}
}

func (r *otlpReceiver) received() (posts, spans int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.posts, len(r.spans)
}

// headerRT sets one header on every request.
type headerRT struct {
	key, value string
	base       http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.value != "" {
		r = r.Clone(r.Context())
		r.Header.Set(h.key, h.value)
	}
	return h.base.RoundTrip(r)
}

const tracingScript = `initialize -> {"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{"subscribe":true},"prompts":{},"completions":{}},"serverInfo":{"name":"script","version":"1"}}}
completion/complete -> {"jsonrpc":"2.0","id":{{id}},"result":{"completion":{"values":["a"]}}}
resources/subscribe -> {"jsonrpc":"2.0","id":{{id}},"result":{}}
tools/list -> {"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"name":"hello","inputSchema":{"type":"object"}}]}}
tools/call hello -> {"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"hello"}]}}
resources/list -> {"jsonrpc":"2.0","id":{{id}},"result":{"resources":[{"uri":"note://one","name":"one"}]}}
resources/read -> {"jsonrpc":"2.0","id":{{id}},"result":{"contents":[{"uri":"note://one","text":"one"}]}}
prompts/list -> {"jsonrpc":"2.0","id":{{id}},"result":{"prompts":[{"name":"greet"}]}}
prompts/get -> {"jsonrpc":"2.0","id":{{id}},"result":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}
`

// A client's trace continues through Plexus into a stdio server: the face's
// server span is the child of the client's traceparent (from _meta, or from
// the HTTP header), the upstream call's client span the face span's child,
// and the server receives that span's context in _meta, all one trace, sent
// to a real OTLP receiver over HTTP, then over gRPC, beside a span of the
// server's start; an HTTP server gets the context in the Traceparent
// header too. The setting applies without a restart, both ways: before
// tracing is on and after it is off again, the same daemon sends the
// receiver nothing and the server gets the client's _meta unchanged.
func TestTracingOneTrace(t *testing.T) {
	t.Parallel()
	rcv := startOTLPReceiver(t)
	e := testenv.New(t)
	e.ExtraEnv = append(e.ExtraEnv, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.url, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_BLRP_SCHEDULE_DELAY=50")
	dir := t.TempDir()
	script, saw := filepath.Join(dir, "script"), filepath.Join(dir, "saw")
	if err := os.WriteFile(script, []byte(tracingScript), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	// The server is the scripted one, behind a tee of what it reads.
	e.MustRun("add", "srv", "--", "/bin/sh", "-c", `tee -a "$0" | "$1" "$2"`, saw, testenv.ScriptServer(t), script)
	httpURL, httpSaw := testenv.StartScriptHTTP(t, script)
	e.MustRun("add", "srvh", httpURL)
	_, base, token := faceURL(t, e)

	session := func(ctx context.Context, header string) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
		rt := headerRT{key: "Traceparent", value: header, base: bearer{token: token}}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	callTool := func(tool, header, metaParent string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cs := session(ctx, header)
		defer cs.Close()
		p := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"secret": "canary-arg-7d1"}}
		if metaParent != "" {
			p.Meta = mcp.Meta{"traceparent": metaParent, "tracestate": "vendor=x", "other": "kept"}
		}
		res, err := cs.CallTool(ctx, p)
		if got := textOfResult(t, res, err); got != "hello" {
			t.Fatalf("call = %q, want hello", got)
		}
	}
	call := func(header, metaParent string) { t.Helper(); callTool("srv_hello", header, metaParent) }
	sawCall := func(n int) string { t.Helper(); return sawCallIn(t, saw, n) }

	// Off: nothing exported, and the client's _meta reaches the server as
	// it was written.
	const (
		offTrace = "0af7651916cd43dd8448eb211c80319c"
		clientSp = "b7ad6b7169203331"
	)
	call("", "00-"+offTrace+"-"+clientSp+"-01")
	if l := sawCall(1); !strings.Contains(l, `"_meta":{"other":"kept","traceparent":"00-`+offTrace+`-`+clientSp+`-01","tracestate":"vendor=x"}`) {
		t.Errorf("tracing off: the server did not get the client's _meta as written:\n%s", l)
	}
	time.Sleep(300 * time.Millisecond) // six export periods
	if posts, spans := rcv.received(); posts != 0 || spans != 0 {
		t.Fatalf("tracing off: the receiver got %d posts, %d spans", posts, spans)
	}

	// On, without a restart: the change applies before the command returns.
	e.MustRun("settings", "set", "tracing.enabled", "true")

	for i, c := range []struct{ name, trace, header, meta string }{
		{"from _meta", "4bf92f3577b34da6a3ce929d0e0e4736", "", ""},
		{"from the HTTP header", "5cf92f3577b34da6a3ce929d0e0e4737", "", ""},
	} {
		parent := "00-" + c.trace + "-" + clientSp + "-01"
		if i == 0 {
			call("", parent)
		} else {
			call(parent, "")
		}
		spans := rcv.trace(t, c.trace, 2)
		face, up := faceAndUpstream(spans)
		if face == nil || up == nil {
			t.Fatalf("%s: trace %s has %d spans, want the face's (server) and the upstream call's (client): %v", c.name, c.trace, len(spans), spans)
		}
		if hex.EncodeToString(face.ParentSpanId) != clientSp {
			t.Errorf("%s: the face span's parent is %x, want the client's %s", c.name, face.ParentSpanId, clientSp)
		}
		if string(up.ParentSpanId) != string(face.SpanId) {
			t.Errorf("%s: the upstream span's parent is %x, want the face span %x", c.name, up.ParentSpanId, face.SpanId)
		}
		attrs := map[string]string{}
		for _, s := range []*tracepb.Span{face, up} {
			for _, a := range s.Attributes {
				attrs[a.Key] = a.Value.GetStringValue()
				if strings.Contains(a.Value.String(), "canary-arg") {
					t.Errorf("%s: span %q carries an argument: %s=%v", c.name, s.Name, a.Key, a.Value)
				}
			}
		}
		if attrs["mcp.method.name"] != "tools/call" || attrs["gen_ai.tool.name"] == "" || attrs["plexus.server.name"] != "srv" {
			t.Errorf("%s: attributes %v, want mcp.method.name, gen_ai.tool.name and plexus.server.name", c.name, attrs)
		}
		want := `"traceparent":"00-` + c.trace + `-` + hex.EncodeToString(up.SpanId) + `-01"`
		if l := sawCall(2 + i); !strings.Contains(l, want) {
			t.Errorf("%s: the server did not receive the upstream span's context %s:\n%s", c.name, want, l)
		} else if i == 0 && (!strings.Contains(l, `"other":"kept"`) || strings.Count(l, "traceparent") != 1) {
			t.Errorf("%s: the client's other _meta members were not kept, or traceparent twice:\n%s", c.name, l)
		}
	}
	// Over streamable HTTP, the server gets the upstream span's context in
	// _meta too.
	const httpTrace = "6df92f3577b34da6a3ce929d0e0e4738"
	callTool("srvh_hello", "", "00-"+httpTrace+"-"+clientSp+"-01")
	_, up := faceAndUpstream(rcv.trace(t, httpTrace, 2))
	if up == nil {
		t.Fatal("HTTP server: no upstream span in the client's trace")
	}
	if l := sawCallIn(t, httpSaw, 1); !strings.Contains(l, `"traceparent":"00-`+httpTrace+`-`+hex.EncodeToString(up.SpanId)+`-01"`) ||
		!strings.HasSuffix(l, ` traceparent=00-`+httpTrace+`-`+hex.EncodeToString(up.SpanId)+`-01`) {
		t.Errorf("HTTP server: it did not receive the upstream span's context in _meta and in the Traceparent header:\n%s", l)
	}
	// The audit log's export as OTLP logs follows mcp.audit.otlp without a
	// restart: on, a call's record reaches the receiver; off, no more do.
	e.MustRun("settings", "set", "audit.otlp", "true")
	e.MustRun("call", "srvh_hello", `{}`)
	if !rcv.logsSaying("plexus.audit tools/call ok") {
		t.Fatal("audit.otlp on: no audit record reached the receiver")
	}
	e.MustRun("settings", "unset", "audit.otlp")
	time.Sleep(200 * time.Millisecond) // the old exporter's flush
	rcv.mu.Lock()
	before := len(rcv.logs)
	rcv.mu.Unlock()
	e.MustRun("call", "srvh_hello", `{}`)
	time.Sleep(300 * time.Millisecond) // six export periods
	rcv.mu.Lock()
	if after := len(rcv.logs); after != before {
		t.Errorf("audit.otlp off again: %d more log records: %q", after-before, rcv.logs[before:])
	}
	rcv.mu.Unlock()
	// Over OTLP/gRPC, once the setting says so (again without a restart).
	e.MustRun("settings", "set", "tracing.protocol", "grpc")
	const grpcTrace = "7ef92f3577b34da6a3ce929d0e0e4739"
	call("", "00-"+grpcTrace+"-"+clientSp+"-01")
	spans := rcv.trace(t, grpcTrace, 2)
	if len(spans) < 2 {
		t.Fatalf("gRPC: trace %s has %d spans, want the face's and the upstream call's", grpcTrace, len(spans))
	}
	rcv.mu.Lock()
	for _, sp := range spans {
		if !rcv.grpc[hex.EncodeToString(sp.SpanId)] {
			t.Errorf("gRPC: span %q came over OTLP/HTTP", sp.Name)
		}
	}
	rcv.mu.Unlock()
	// A resource read and a prompt get are traced the same way, and a call
	// of the API's (plexus call: the host's decoded path) has the upstream
	// span.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs := session(ctx, "")
	defer cs.Close()
	const readTrace, promptTrace = "9af92f3577b34da6a3ce929d0e0e473b", "aaf92f3577b34da6a3ce929d0e0e473c"
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://one", Meta: mcp.Meta{"traceparent": "00-" + readTrace + "-" + clientSp + "-01"}}); err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "srv__greet", Meta: mcp.Meta{"traceparent": "00-" + promptTrace + "-" + clientSp + "-01"}}); err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	for _, c := range []struct{ method, trace, name string }{
		{"resources/read", readTrace, "resources/read"},
		{"prompts/get", promptTrace, "prompts/get srv__greet"},
	} {
		face, up := faceAndUpstream(rcv.trace(t, c.trace, 2))
		if face == nil || up == nil || face.Name != c.name || hex.EncodeToString(face.ParentSpanId) != clientSp || string(up.ParentSpanId) != string(face.SpanId) {
			t.Fatalf("%s: face span %v, upstream span %v: want %q, the client's child, and its child", c.method, face, up, c.name)
		}
		if l := sawMethodIn(t, saw, c.method, 1); !strings.Contains(l, `"traceparent":"00-`+c.trace+`-`+hex.EncodeToString(up.SpanId)+`-01"`) {
			t.Errorf("%s: the server did not receive the upstream span's context:\n%s", c.method, l)
		}
	}
	// A list is a face span; completion and a subscription are a face
	// span and an upstream one, and the server gets the context.
	const listTrace, completeTrace, subscribeTrace = "baf92f3577b34da6a3ce929d0e0e473d", "caf92f3577b34da6a3ce929d0e0e473e", "daf92f3577b34da6a3ce929d0e0e473f"
	parent := func(trace string) mcp.Meta { return mcp.Meta{"traceparent": "00-" + trace + "-" + clientSp + "-01"} }
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Meta: parent(listTrace)}); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "srv__greet"},
		Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}, Meta: parent(completeTrace)}); err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	// resources/subscribe is a session-era request (2026-07-28 listens).
	old, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := old.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://one", Meta: parent(subscribeTrace)}); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}
	for _, c := range []struct{ method, trace string }{{"tools/list", listTrace}, {"completion/complete", completeTrace}, {"resources/subscribe", subscribeTrace}} {
		want := 2
		if c.method == "tools/list" {
			want = 1 // answered from the catalog
		}
		face, up := faceAndUpstream(rcv.trace(t, c.trace, want))
		if face == nil || face.Name != c.method || hex.EncodeToString(face.ParentSpanId) != clientSp || (want == 2) != (up != nil) ||
			up != nil && string(up.ParentSpanId) != string(face.SpanId) {
			t.Fatalf("%s: face span %v, upstream span %v: want %q, the client's child, and (not for a list) its child", c.method, face, up, c.method)
		}
		if up != nil {
			if l := sawMethodIn(t, saw, c.method, 1); !strings.Contains(l, `"traceparent":"00-`+c.trace+`-`+hex.EncodeToString(up.SpanId)+`-01"`) {
				t.Errorf("%s: the server did not receive the upstream span's context:\n%s", c.method, l)
			}
		}
	}
	// The gate's wait for the user's approval is a step of its own, the
	// face span's child, before the upstream call.
	e.MustRun("settings", "set", "policy.rules", `[{"tool": "srv_hello", "client": "asker", "action": "askEveryCall"}]`)
	asker := mcp.NewClient(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}})
	acs, err := asker.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acs.Close()
	const askTrace = "eaf92f3577b34da6a3ce929d0e0e4740"
	res, err := acs.CallTool(ctx, &mcp.CallToolParams{Name: "srv_hello", Meta: parent(askTrace)})
	if got := textOfResult(t, res, err); got != "hello" {
		t.Fatalf("an approved call = %q", got)
	}
	spans = rcv.trace(t, askTrace, 3)
	face, up := faceAndUpstream(spans)
	var step *tracepb.Span
	for _, sp := range spans {
		if sp.Name == "approve srv_hello" {
			step = sp
		}
	}
	if face == nil || up == nil || step == nil || string(step.ParentSpanId) != string(face.SpanId) || string(up.ParentSpanId) != string(face.SpanId) {
		t.Fatalf("an approved call: face %v, approval %v, upstream %v: want the approval and the upstream call the face span's children", face, step, up)
	}
	e.MustRun("settings", "unset", "policy.rules")
	// Keeping a result over its cap is a step of its own too.
	capped := `{"type": "http", "url": "` + httpURL + `", "maxResultBytes": 8}`
	if _, err := client.New(e.Home).AddServer(ctx, apitype.PutServerRequest{Name: "srvk", Config: json.RawMessage(capped)}, 0); err != nil {
		t.Fatal(err)
	}
	const keepTrace = "faf92f3577b34da6a3ce929d0e0e4741"
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "srvk_hello", Meta: parent(keepTrace)}); err != nil {
		t.Fatalf("a call over its cap: %v", err)
	}
	spans = rcv.trace(t, keepTrace, 3)
	face, _ = faceAndUpstream(spans)
	step = nil
	for _, sp := range spans {
		if sp.Name == "keep result srvk_hello" {
			step = sp
		}
	}
	if face == nil || step == nil || string(step.ParentSpanId) != string(face.SpanId) {
		t.Errorf("a call over its cap: face %v, keep %v: want the keeping the face span's child", face, step)
	}
	if out := strings.TrimSpace(e.MustRun("call", "srv_hello", `{}`)); out != "hello" {
		t.Fatalf("plexus call: %q", out)
	}
	if l := sawCall(6); !strings.Contains(l, `"traceparent":"00-`) {
		t.Errorf("plexus call: the server got no trace context:\n%s", l)
	}
	// A server's start is a span of its own.
	e.MustRun("restart", "srv")
	for end := time.Now().Add(10 * time.Second); !rcv.has("start srv"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no span of the server's start")
		}
	}
	// Off again: nothing more is sent, and the server gets the client's
	// _meta as it was written.
	e.MustRun("settings", "set", "tracing.enabled", "false")
	const offAgain = "8af92f3577b34da6a3ce929d0e0e473a"
	call("", "00-"+offAgain+"-"+clientSp+"-01")
	if l := sawCall(7); !strings.Contains(l, `"traceparent":"00-`+offAgain+`-`+clientSp+`-01"`) {
		t.Errorf("tracing off again: the server did not get the client's traceparent as written:\n%s", l)
	}
	time.Sleep(300 * time.Millisecond) // six export periods
	if got := rcv.trace(t, offAgain, 0); len(got) != 0 {
		t.Errorf("tracing off again: %d spans of the call were sent", len(got))
	}
}

// faceAndUpstream are the face's (server) span and the upstream call's
// (client) span among spans; nil where there is none.
func faceAndUpstream(spans []*tracepb.Span) (face, up *tracepb.Span) {
	for _, sp := range spans {
		switch sp.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			face = sp
		case tracepb.Span_SPAN_KIND_CLIENT:
			up = sp
		}
	}
	return face, up
}

// has reports whether a span named name came, complete.
func (r *otlpReceiver) has(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.Name == name && s.EndTimeUnixNano > s.StartTimeUnixNano {
			return true
		}
	}
	return false
}

// sawCallIn is the nth tools/call line of a file of what a server read,
// waiting a little for it: tee writes its file after the server's pipe.
func sawCallIn(t *testing.T, saw string, n int) string {
	t.Helper()
	return sawMethodIn(t, saw, "tools/call", n)
}

// sawMethodIn is the nth line of a request of method in a file of what a
// server read, waiting a little for it.
func sawMethodIn(t *testing.T, saw, method string, n int) string {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(saw)
		var calls []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"`+method+`"`) {
				calls = append(calls, l)
			}
		}
		if len(calls) >= n {
			return calls[n-1]
		}
		if time.Now().After(end) {
			t.Fatalf("the server received %d calls, want %d:\n%s", len(calls), n, b)
		}
	}
}
