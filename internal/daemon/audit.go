package daemon

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// AuditName is the audit log's file name under the home directory.
const AuditName = "audit.jsonl"

// openAudit opens the audit log as the settings say (mcp.audit, on by
// default; read at start, as tracing is): nil when it is off. Sinks are
// the team's database and the OTLP exporter, if any.
func openAudit(home string, m config.MCP, replica string, chain *audit.Chain, sinks []audit.Sink, log *slog.Logger) (*audit.Log, error) {
	if !m.AuditOn() {
		return nil, nil
	}
	opts := audit.Options{Path: filepath.Join(home, AuditName), Replica: replica, Chain: chain, Sinks: sinks,
		Logger: log.With("component", "audit")}
	if a := m.Audit; a != nil {
		opts.MaxFileBytes, opts.MaxFiles = a.MaxFileBytes, a.MaxFiles
	}
	return audit.Open(opts)
}

// auditOTLP starts the export of audit records as OTLP logs when
// mcp.audit.otlp asks for it, by mcp.tracing's protocol; nil otherwise.
func auditOTLP(ctx context.Context, m config.MCP, version string, log *slog.Logger) (*tracing.AuditLogs, error) {
	if !m.AuditOn() || m.Audit == nil || !m.Audit.OTLP {
		return nil, nil
	}
	proto := ""
	if m.Tracing != nil {
		proto = m.Tracing.Protocol
	}
	return tracing.StartAuditLogs(ctx, proto, version, log.With("component", "audit"))
}
