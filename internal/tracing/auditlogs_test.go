package tracing

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/plexus-mcp/plexus/internal/audit"
)

// TestAuditLogsExported: audit records reach an OTLP/HTTP logs receiver
// (built on the official OTLP protobuf messages) as log records with the
// record's fields as attributes, sent by the time the exporter shuts down.
func TestAuditLogsExported(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []*logspb.LogRecord
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var msg collogs.ExportLogsServiceRequest
		if r.URL.Path != "/v1/logs" || proto.Unmarshal(b, &msg) != nil {
			http.Error(w, "want OTLP logs", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rl := range msg.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				got = append(got, sl.LogRecords...)
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")

	a, err := StartAuditLogs(t.Context(), "", "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)
	if err := a.Write(t.Context(), []audit.Record{{Time: at, Kind: audit.KindToolCall, Member: "ann", Client: "claude-code",
		Server: "github", Tool: "search", Name: "github_search", Outcome: "ok", Ms: 12.5, ArgBytes: 30}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d log records exported, want 1", len(got))
	}
	lr := got[0]
	attrs := map[string]string{}
	for _, kv := range lr.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	if lr.TimeUnixNano != uint64(at.UnixNano()) || lr.Body.GetStringValue() != "tools/call ok" || lr.EventName != "plexus.audit" ||
		attrs["enduser.id"] != "ann" || attrs["gen_ai.tool.name"] != "search" || attrs["plexus.server.name"] != "github" || attrs["plexus.client.name"] != "claude-code" {
		t.Errorf("exported record: %v", lr)
	}
}
