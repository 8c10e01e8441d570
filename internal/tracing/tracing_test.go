package tracing

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/plexus-mcp/plexus/internal/config"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// on turns tracing on into a recorder for the test's length.
func on(t *testing.T) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer("test")
	tracer.Store(&tr)
	t.Cleanup(func() { tracer.Store(nil) })
	return rec
}

// Off, nothing is started, read or written: the request keeps its bytes.
func TestOffChangesNothing(t *testing.T) {
	ctx := context.Background()
	own := json.RawMessage(`{"traceparent":"` + parent + `","x":1}`)
	in := FromMeta(own)
	h := http.Header{"Traceparent": {parent}}
	if in != (Incoming{}) || FromHeader(h) != (Incoming{}) {
		t.Fatalf("off, the client's context was read: %v", in)
	}
	c, span := StartServer(ctx, Incoming{Traceparent: parent}, Call{Method: "tools/call"})
	if span != nil || c != ctx {
		t.Fatal("off, StartServer made a span")
	}
	span.End(nil, "") // a nil span is valid
	if got := Meta(ctx, own); &got[0] != &own[0] {
		t.Fatalf("off, Meta made new bytes: %s", got)
	}
	out := http.Header{}
	InjectHeader(ctx, out)
	if len(out) != 0 {
		t.Fatalf("off, InjectHeader wrote %v", out)
	}
}

// On, the upstream's _meta carries the client span's context in place of
// the client's, and every other member as it was written.
func TestMetaKeepsOtherMembers(t *testing.T) {
	rec := on(t)
	ctx, face := StartServer(context.Background(), FromMeta(json.RawMessage(`{"traceparent":"`+parent+`"}`)), Call{Method: "tools/call", Tool: "t"})
	ctx, up := StartClient(ctx, Call{Method: "tools/call", Tool: "t", Server: "s"})
	sc := up.s.SpanContext()
	want := `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-` + sc.SpanID().String() + `-01"`
	for _, tc := range []struct{ own, keep string }{
		{``, `{`},
		{`{}`, `{`},
		{`{"traceparent":"` + parent + `","b":{"z":[1, 2]} ,"tracestate":"v=1","ü":"\u00e9"}`, `{"b":{"z":[1, 2]},"ü":"\u00e9",`},
		{`{"progressToken":7}`, `{"progressToken":7,`},
	} {
		got := string(Meta(ctx, json.RawMessage(tc.own)))
		if !strings.HasPrefix(got, tc.keep) || !strings.Contains(got, want) || strings.Count(got, "traceparent") != 1 || !json.Valid([]byte(got)) {
			t.Errorf("Meta(%s) = %s, want %s… with %s once", tc.own, got, tc.keep, want)
		}
	}
	// A key with an escape is not ours to rewrite: left as it is.
	odd := json.RawMessage(`{"a\"b":1}`)
	if got := Meta(ctx, odd); string(got) != string(odd) {
		t.Errorf("Meta(%s) = %s", odd, got)
	}
	up.End(context.Canceled, ErrType(context.Canceled))
	face.End(nil, "")
	spans := rec.Ended()
	if len(spans) != 2 || spans[0].Parent().SpanID() != spans[1].SpanContext().SpanID() ||
		spans[1].Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("spans are not one trace: %v", spans)
	}
	var errType string
	for _, a := range spans[0].Attributes() {
		if a.Key == "error.type" {
			errType = a.Value.AsString()
		}
	}
	if errType != "cancelled" {
		t.Errorf("error.type %q, want cancelled", errType)
	}
}

// The exporter follows the settings: on, the same settings again change
// nothing, the other protocol is a new exporter, off is off; after Stop,
// nothing turns it on again. A collector that takes the connection and
// never answers holds up neither a change of the settings nor, beyond its
// context, a shutdown.
func TestExporterFollowsTheSettings(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	ctx := context.Background()
	e := NewExporter("test", slog.New(slog.DiscardHandler))
	if err := e.Apply(ctx, nil); err != nil || On() {
		t.Fatalf("nil settings: on %v, %v", On(), err)
	}
	httpOn := &config.Tracing{Enabled: true}
	if err := e.Apply(ctx, httpOn); err != nil || !On() {
		t.Fatalf("enabled: on %v, %v", On(), err)
	}
	first := tracer.Load()
	_, s := StartClient(ctx, Call{Method: "tools/call", Tool: "t"})
	s.End(nil, "") // exported to the stalled collector
	time.Sleep(50 * time.Millisecond)
	if err := e.Apply(ctx, &config.Tracing{Enabled: true, Protocol: config.TracingHTTP}); err != nil || tracer.Load() != first {
		t.Fatalf("the same settings again made a new tracer (%v)", err)
	}
	start := time.Now()
	if err := e.Apply(ctx, &config.Tracing{Enabled: true, Protocol: config.TracingGRPC}); err != nil || !On() || tracer.Load() == first {
		t.Fatalf("grpc: on %v, a new tracer %v, %v", On(), tracer.Load() != first, err)
	}
	_, s = StartClient(ctx, Call{Method: "tools/call", Tool: "t"})
	s.End(nil, "")
	if err := e.Apply(ctx, &config.Tracing{Enabled: false, Protocol: config.TracingGRPC}); err != nil || On() {
		t.Fatalf("disabled: on %v, %v", On(), err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("two changes of the settings with a stalled collector took %s", d)
	}
	if err := e.Apply(ctx, httpOn); err != nil || !On() {
		t.Fatalf("enabled again: on %v, %v", On(), err)
	}
	_, s = StartClient(ctx, Call{Method: "tools/call", Tool: "t"})
	s.End(nil, "")
	stop, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	e.Stop(stop) // its error: the spans the stalled collector never took
	if d := time.Since(start); d > 2*time.Second || On() {
		t.Errorf("Stop with a stalled collector: %s, on %v", d, On())
	}
	if err := e.Apply(ctx, httpOn); err != nil || On() {
		t.Errorf("Apply after Stop turned tracing on (%v)", err)
	}
}
