package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/audit"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/tracing"
)

// AuditName is the audit log's file name under the home directory.
const AuditName = "audit.jsonl"

// openAudit opens the audit log as the settings say (mcp.audit, on by
// default; off, it opens no file until it is turned on): Apply follows
// them from then on. Sinks are the team's database and the OTLP exporter
// (auditOTLP).
func openAudit(home string, m config.MCP, replica string, chain *audit.Chain, sinks []audit.Sink, log *slog.Logger) (*audit.Log, error) {
	opts := audit.Options{Path: filepath.Join(home, AuditName), Replica: replica, Chain: chain, Sinks: sinks,
		Logger: log.With("component", "audit"), Off: !m.AuditOn()}
	if a := m.Audit; a != nil {
		opts.MaxFileBytes, opts.MaxFiles = a.MaxFileBytes, a.MaxFiles
	}
	return audit.Open(opts)
}

// applyAudit makes the audit log what m says: on or off, its bounds, and
// its export as OTLP logs. It runs under the store's lock (store.OnConfig):
// it never blocks on the disk or the network.
func applyAudit(ctx context.Context, alog *audit.Log, otlp *auditOTLP, m config.MCP) {
	var maxBytes int64
	var maxFiles int
	if a := m.Audit; a != nil {
		maxBytes, maxFiles = a.MaxFileBytes, a.MaxFiles
	}
	alog.Apply(m.AuditOn(), maxBytes, maxFiles)
	otlp.apply(ctx, m)
}

// auditOTLP is the audit log's sink of OTLP logs: it exports records when
// mcp.audit.otlp asks for it, by mcp.tracing's protocol, and follows the
// settings (apply) — a change starts the new exporter and flushes the old
// one in the background, owned here until stop.
type auditOTLP struct {
	version string
	log     *slog.Logger

	mu    sync.Mutex
	cur   *tracing.AuditLogs // nil: not exporting; guarded by mu
	proto string             // cur's protocol; guarded by mu
	done  bool               // stop was called: apply does nothing; guarded by mu
	bg    sync.WaitGroup     // flushes of replaced exporters
}

// Write sends a batch to the exporter that runs, if any.
func (o *auditOTLP) Write(ctx context.Context, recs []audit.Record) error {
	o.mu.Lock()
	cur := o.cur
	o.mu.Unlock()
	if cur == nil {
		return nil
	}
	return cur.Write(ctx, recs)
}

// apply starts, restarts or stops the exporter as m says. An exporter
// that cannot start leaves the export off, and says so in the log.
func (o *auditOTLP) apply(ctx context.Context, m config.MCP) {
	want, proto := m.AuditOn() && m.Audit != nil && m.Audit.OTLP, ""
	if m.Tracing != nil {
		proto = m.Tracing.Protocol
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || want == (o.cur != nil) && (!want || proto == o.proto) {
		return
	}
	if old := o.cur; old != nil {
		o.cur = nil
		o.bg.Go(func() { o.flush(old, "audit: records not exported when the settings changed") })
	}
	if !want {
		o.log.Info("audit: OTLP export off")
		return
	}
	cur, err := tracing.StartAuditLogs(ctx, proto, o.version, o.log)
	if err != nil {
		o.log.Warn("audit: the OTLP exporter could not start; records are not exported", "err", err)
		return
	}
	o.cur, o.proto = cur, proto
	o.log.Info("audit: OTLP export on", "protocol", proto)
}

// stop flushes what is not yet exported, within 5 s, and waits for the
// flushes of replaced exporters.
func (o *auditOTLP) stop() {
	o.mu.Lock()
	cur := o.cur
	o.cur, o.done = nil, true
	o.mu.Unlock()
	if cur != nil {
		o.flush(cur, "audit: records not exported at shutdown")
	}
	o.bg.Wait()
}

func (o *auditOTLP) flush(a *tracing.AuditLogs, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		o.log.Warn(msg, "err", err)
	}
}
