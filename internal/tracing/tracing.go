// Package tracing exports OpenTelemetry traces of the calls Plexus carries:
// a server-kind span for a client's request on the face, a client-kind span
// for the call to the upstream server, and a span for a server's start. It
// is the one owner of OpenTelemetry in Plexus: the face and upstream call
// Start*, and read and write W3C trace context only through this package.
//
// Tracing is off unless the daemon's settings enable it (mcp.tracing); the
// exporter (OTLP over HTTP or gRPC) then reads the standard
// OTEL_EXPORTER_OTLP_* variables for its endpoint, headers and timeout.
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
	"sync/atomic"

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

// The live tracer: nil when tracing is off. The daemon sets it once at
// start (Start) and clears it at shutdown; it is process-wide because a
// trace crosses every component of the call path.
var tracer atomic.Pointer[trace.Tracer]

// w3c is the W3C Trace Context propagator (traceparent, tracestate).
var w3c = propagation.TraceContext{}

// On reports whether tracing is on.
func On() bool { return tracer.Load() != nil }

// Start turns tracing on as s says (nothing when s is nil or disabled) and
// returns the function that flushes the spans not yet sent and turns it
// off. version names the service's version in every span's resource.
func Start(ctx context.Context, s *config.Tracing, version string, log *slog.Logger) (stop func(context.Context) error, err error) {
	if s == nil || !s.Enabled {
		return func(context.Context) error { return nil }, nil
	}
	var exp sdktrace.SpanExporter
	switch s.Protocol {
	case config.TracingGRPC:
		exp, err = otlptracegrpc.New(ctx)
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: starting the OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("plexus"), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := tp.Tracer("github.com/plexus-mcp/plexus")
	tracer.Store(&t)
	proto := s.Protocol
	if proto == "" {
		proto = config.TracingHTTP
	}
	log.Info("tracing on", "protocol", proto)
	return func(ctx context.Context) error {
		tracer.Store(nil)
		return tp.Shutdown(ctx)
	}, nil
}

// Span is one span; nil (tracing off) is a valid Span that does nothing.
type Span struct{ s trace.Span }

// Call names what a span is about: a request's method, the tool it calls
// (tools/call only), the face session it belongs to and the server.
type Call struct {
	Method, Tool, Session, Server string
}

func (c Call) attrs() []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 4)
	a = append(a, attribute.String("mcp.method.name", c.Method))
	if c.Tool != "" {
		a = append(a, attribute.String("gen_ai.tool.name", c.Tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	if c.Session != "" {
		a = append(a, attribute.String("mcp.session.id", c.Session))
	}
	if c.Server != "" {
		a = append(a, attribute.String("plexus.server.name", c.Server))
	}
	return a
}

// name is a span's name per the MCP conventions: "{method} {target}".
func (c Call) name() string {
	if c.Tool != "" {
		return c.Method + " " + c.Tool
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
