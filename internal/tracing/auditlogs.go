package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/config"
)

// AuditLogs is a sink of the audit log (audit.Sink) that exports every
// record as an OpenTelemetry log record over OTLP, by the transport of
// mcp.tracing.protocol, to where the OTEL_EXPORTER_OTLP_* variables say
// (the logs endpoint: …/v1/logs). The SDK's batch processor sends them
// in the background; a collector that does not answer loses records, it
// does not hold up the audit log's writer.
type AuditLogs struct {
	lp     *sdklog.LoggerProvider
	logger otellog.Logger
}

// StartAuditLogs starts the exporter of audit records (protocol as
// mcp.tracing.protocol names it; "" is OTLP/HTTP).
func StartAuditLogs(ctx context.Context, protocol, version string, log *slog.Logger) (*AuditLogs, error) {
	var exp sdklog.Exporter
	var err error
	switch protocol {
	case config.TracingGRPC:
		exp, err = otlploggrpc.New(ctx)
	default:
		exp, err = otlploghttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: starting the OTLP log exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("plexus"), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	log.Info("audit records exported as OTLP logs", "protocol", cmpProtocol(protocol))
	return &AuditLogs{lp: lp, logger: lp.Logger("github.com/plexus-mcp/plexus/audit")}, nil
}

func cmpProtocol(p string) string {
	if p == "" {
		return config.TracingHTTP
	}
	return p
}

// Write emits one log record per audit record (audit.Sink).
func (a *AuditLogs) Write(ctx context.Context, recs []audit.Record) error {
	for i := range recs {
		r := &recs[i]
		var lr otellog.Record
		lr.SetTimestamp(r.Time)
		lr.SetEventName("plexus.audit")
		lr.SetSeverity(otellog.SeverityInfo)
		lr.SetBody(attribute.StringValue(r.Kind + " " + r.Outcome))
		lr.AddAttributes(auditAttrs(r)...)
		a.logger.Emit(ctx, lr)
	}
	return nil
}

// auditAttrs are a record's fields as attributes, named by OpenTelemetry's
// conventions where they have a name for it (MCP, GenAI, enduser).
func auditAttrs(r *audit.Record) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 16)
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, attribute.String(k, v))
		}
	}
	add("plexus.audit.kind", r.Kind)
	add("plexus.audit.outcome", r.Outcome)
	add("plexus.audit.reason", r.Reason)
	add("plexus.replica", r.Replica)
	add("enduser.id", r.Member)
	add("plexus.client.name", r.Client)
	add("plexus.client.version", r.ClientVersion)
	add("plexus.profile", r.Profile)
	add("mcp.session.id", r.Session)
	add("plexus.server.name", r.Server)
	add("gen_ai.tool.name", r.Tool)
	add("plexus.name", r.Name)
	if r.Ms > 0 {
		kv = append(kv, attribute.Float64("plexus.duration_ms", r.Ms))
	}
	if r.ArgBytes > 0 {
		kv = append(kv, attribute.Int("plexus.arguments.size", r.ArgBytes))
	}
	if r.ResultBytes > 0 {
		kv = append(kv, attribute.Int("plexus.result.size", r.ResultBytes))
	}
	// Payloads only as the log file has them: for a server that asks,
	// redacted by the writer before any sink sees them.
	add("plexus.arguments", string(r.Arguments))
	add("plexus.result", string(r.Result))
	if r.Seq > 0 {
		add("plexus.audit.seq", strconv.FormatUint(r.Seq, 10))
		add("plexus.audit.mac", r.MAC)
	}
	return kv
}

// Shutdown sends what is left and stops the exporter.
func (a *AuditLogs) Shutdown(ctx context.Context) error {
	if a == nil {
		return nil
	}
	return a.lp.Shutdown(ctx)
}
