// Package tracing exports OpenTelemetry traces of the calls Plexus carries:
// a server-kind span for a client's request on the face, a client-kind span
// for the call to the upstream server, and a span for a server's start. It
// is the one owner of OpenTelemetry in Plexus: the face and upstream call
// Start*, and read and write W3C trace context only through this package.
//
// Tracing is off unless the daemon's settings enable it (mcp.tracing, applied
// whenever it changes: Exporter); the exporter (OTLP over HTTP or gRPC) then
// reads the standard OTEL_EXPORTER_OTLP_* variables for its endpoint,
// headers and timeout.
// Off, nothing is exported and nothing is added to a request: every Start*
// returns its context unchanged and a nil *Span after one atomic load.
//
// Spans carry the attributes of OpenTelemetry's semantic conventions for
// MCP (mcp.method.name, mcp.session.id, gen_ai.tool.name, error.type) and
// never a call's arguments or results.
//
// It also exports the audit log's records as OTLP log records when
// mcp.audit.otlp asks for it (auditlogs.go), by the same protocol setting
// and variables.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/plexus-mcp/plexus/internal/config"
)

// The live tracer: nil when tracing is off. The daemon's Exporter sets and
// clears it; it is process-wide because a trace crosses every component
// of the call path.
var tracer atomic.Pointer[trace.Tracer]

// w3c is the W3C Trace Context propagator (traceparent, tracestate).
var w3c = propagation.TraceContext{}

// On reports whether tracing is on.
func On() bool { return tracer.Load() != nil }

// Exporter owns the daemon's OTLP exporter: Apply starts, restarts or
// stops it as the settings say, whenever they change (mcp.tracing), and
// Stop flushes what is not yet sent at shutdown.
type Exporter struct {
	version string
	log     *slog.Logger

	mu      sync.Mutex
	cur     config.Tracing           // what runs; guarded by mu
	tp      *sdktrace.TracerProvider // nil when off; guarded by mu
	stopped bool                     // Stop was called: Apply does nothing; guarded by mu
}

// NewExporter returns an exporter that is off; version names the
// service's version in every span's resource.
func NewExporter(version string, log *slog.Logger) *Exporter {
	return &Exporter{version: version, log: log}
}

// Apply makes tracing what s says (nil or disabled: off). The same
// settings again change nothing; others stop the running exporter, whose
// spans not yet sent are flushed within flushWait in the background, and
// start the new one: the calls in flight are never held up. An exporter
// that cannot start leaves tracing off and is the error.
func (e *Exporter) Apply(ctx context.Context, s *config.Tracing) error {
	var want config.Tracing
	if s != nil && s.Enabled {
		want = *s
		if want.Protocol == "" {
			want.Protocol = config.TracingHTTP
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if want == e.cur || e.stopped {
		return nil
	}
	if old := e.tp; old != nil {
		tracer.Store(nil)
		e.tp, e.cur = nil, config.Tracing{}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), flushWait)
			defer cancel()
			if err := old.Shutdown(ctx); err != nil {
				e.log.Warn("tracing: spans not sent when the settings changed", "err", err)
			}
		}()
		e.log.Info("tracing off")
	}
	if !want.Enabled {
		return nil
	}
	var exp sdktrace.SpanExporter
	var err error
	switch want.Protocol {
	case config.TracingGRPC:
		exp, err = otlptracegrpc.New(ctx)
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return fmt.Errorf("tracing: starting the OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("plexus"), semconv.ServiceVersion(e.version)))
	if err != nil {
		res = resource.Default()
	}
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	e.cur = want
	t := e.tp.Tracer("github.com/plexus-mcp/plexus")
	tracer.Store(&t)
	e.log.Info("tracing on", "protocol", want.Protocol)
	return nil
}

// flushWait bounds the flush of a stopped exporter's spans: a collector
// that is down or stalls costs this much of a shutdown at most.
const flushWait = 5 * time.Second

// Stop turns tracing off and sends the spans not yet sent, within ctx.
func (e *Exporter) Stop(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	tp := e.tp
	e.tp, e.cur, e.stopped = nil, config.Tracing{}, true
	if tp == nil {
		return nil
	}
	tracer.Store(nil)
	return tp.Shutdown(ctx)
}

// Span is one span; nil (tracing off) is a valid Span that does nothing.
type Span struct{ s trace.Span }

// Call names what a span is about: a request's method, the tool it calls
// (tools/call only), the face session it belongs to and the server.
type Call struct {
	Method, Tool, Session, Server string
	Prompt                        string // prompts/get: the prompt's name
	Resource                      string // resources/read: the resource's URI
}

func (c Call) attrs() []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 4)
	if c.Method != "" {
		a = append(a, attribute.String("mcp.method.name", c.Method))
	}
	if c.Tool != "" {
		a = append(a, attribute.String("gen_ai.tool.name", c.Tool))
		if c.Method == "tools/call" {
			a = append(a, attribute.String("gen_ai.operation.name", "execute_tool"))
		}
	}
	if c.Prompt != "" {
		a = append(a, attribute.String("gen_ai.prompt.name", c.Prompt))
	}
	if c.Resource != "" {
		a = append(a, attribute.String("mcp.resource.uri", c.Resource))
	}
	if c.Session != "" {
		a = append(a, attribute.String("mcp.session.id", c.Session))
	}
	if c.Server != "" {
		a = append(a, attribute.String("plexus.server.name", c.Server))
	}
	return a
}

// name is a span's name per the MCP conventions: "{method} {target}",
// the target a tool's or a prompt's name (a resource's URI is not: it
// may name anything).
func (c Call) name() string {
	switch {
	case c.Tool != "":
		return c.Method + " " + c.Tool
	case c.Prompt != "":
		return c.Method + " " + c.Prompt
	}
	return c.Method
}

// Incoming holds a client's W3C trace context, from its HTTP headers or
// its request's _meta.
type Incoming struct{ Traceparent, Tracestate string }

// FromHeader is the trace context of an HTTP request's headers; zero when
// tracing is off.
func FromHeader(h http.Header) Incoming {
	if !On() {
		return Incoming{}
	}
	return Incoming{Traceparent: h.Get("Traceparent"), Tracestate: h.Get("Tracestate")}
}

type clientKey struct{}

// client is what WithClient notes of a client's HTTP request.
type client struct {
	in      Incoming
	session string
}

// WithClient notes on ctx a client's HTTP trace context (h) and its face
// session ("" for none), for StartServer; ctx itself when tracing is off.
func WithClient(ctx context.Context, h http.Header, session string) context.Context {
	if !On() {
		return ctx
	}
	return context.WithValue(ctx, clientKey{}, client{FromHeader(h), session})
}

// StartServer starts the face's span of a client's request, the child of
// the client's trace context: in (from its request's _meta) if set, else
// its HTTP headers' (WithClient), else the one ctx already carries.
func StartServer(ctx context.Context, in Incoming, c Call) (context.Context, *Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, nil
	}
	if cl, ok := ctx.Value(clientKey{}).(client); ok {
		if in.Traceparent == "" {
			in = cl.in
		}
		if c.Session == "" {
			c.Session = cl.session
		}
	}
	if in.Traceparent != "" {
		carrier := propagation.MapCarrier{"traceparent": in.Traceparent}
		if in.Tracestate != "" {
			carrier["tracestate"] = in.Tracestate
		}
		ctx = w3c.Extract(ctx, carrier)
	}
	ctx, s := (*t).Start(ctx, c.name(), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(c.attrs()...))
	return ctx, &Span{s}
}

// StartClient starts the span of a call to an upstream server; its
// context is what Outgoing passes on to the server.
func StartClient(ctx context.Context, c Call) (context.Context, *Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, nil
	}
	ctx, s := (*t).Start(ctx, c.name(), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(c.attrs()...))
	return ctx, &Span{s}
}

// StartLaunch starts the span of a server's start.
func StartLaunch(ctx context.Context, server, transport string) (context.Context, *Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, nil
	}
	ctx, s := (*t).Start(ctx, "start "+server, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("plexus.server.name", server), attribute.String("network.transport", transport)))
	return ctx, &Span{s}
}

// StartStep starts the span of a step of the call pipeline's own that a
// request waits for — the gate's approval, a start on demand, keeping a
// result over its cap — as the child of ctx's span: an internal span named
// "{step} {tool}" (or "{step} {server}"), with the tool and server as
// attributes (no method: it is not a request) and plexus.step the step.
func StartStep(ctx context.Context, step string, c Call) (context.Context, *Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, nil
	}
	name := step
	switch {
	case c.Tool != "":
		name += " " + c.Tool
	case c.Server != "":
		name += " " + c.Server
	}
	ctx, s := (*t).Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(append(c.attrs(), attribute.String("plexus.step", step))...))
	return ctx, &Span{s}
}

// EndAs ends a step's span with its outcome: "" is success, else the
// step's refusal or failure, as error.type (a gate's marker: "declined",
// "approval_required").
func (s *Span) EndAs(errType string) {
	if s == nil {
		return
	}
	if errType != "" {
		s.s.SetAttributes(attribute.String("error.type", errType))
		s.s.SetStatus(codes.Error, errType)
	}
	s.s.End()
}

// End ends the span with its outcome: err nil is success; else error.type
// names the kind of failure (errType, or "_OTHER") and the status is Error.
// A tool's result with isError is an outcome, not a failure: see ToolError.
func (s *Span) End(err error, errType string) {
	if s == nil {
		return
	}
	if err != nil {
		if errType == "" {
			errType = "_OTHER"
		}
		s.s.SetAttributes(attribute.String("error.type", errType))
		s.s.SetStatus(codes.Error, errType)
	}
	s.s.End()
}

// ToolError marks a tool call whose result says isError: error.type
// "tool_error", as the MCP conventions name it.
func (s *Span) ToolError() {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.String("error.type", "tool_error"))
	s.s.SetStatus(codes.Error, "tool_error")
}

// Outgoing is the W3C trace context of ctx's span, to pass on to an
// upstream server; zero when tracing is off or ctx has no span.
func Outgoing(ctx context.Context) Incoming {
	if !On() {
		return Incoming{}
	}
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	return Incoming{Traceparent: carrier["traceparent"], Tracestate: carrier["tracestate"]}
}

// InjectHeader sets ctx's trace context on an HTTP request's headers (to
// an HTTP server); nothing when tracing is off or ctx has no span.
func InjectHeader(ctx context.Context, h http.Header) {
	if !On() {
		return
	}
	w3c.Inject(ctx, propagation.HeaderCarrier(h))
}

// ErrType is the error.type of err ("" for none): its JSON-RPC code when
// it has one, "cancelled" or "timeout", else "_OTHER".
func ErrType(err error) string {
	if err == nil {
		return ""
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return strconv.FormatInt(rpc.Code, 10)
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "_OTHER"
}
