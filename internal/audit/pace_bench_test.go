//go:build unix

package audit

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// BenchmarkRecordPaced is the log's whole cost of a record when records
// come as calls do, one at a time with a gap between them (50 µs here),
// not in a burst: the writer's JSON, its write(2) and its wake-up
// included. cpu-ns/op is this process's CPU time a record, the gap's own
// sleep included (the same in every run).
func BenchmarkRecordPaced(b *testing.B) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), "audit.jsonl")})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := caller.With(context.Background(), caller.Identity{User: "ann@example.com"})
	ctx = WithClient(ctx, Client{Name: "claude-code", Version: "2.1", Profile: "dev", Session: "s1"})
	r := Record{Kind: KindToolCall, Server: "github", Tool: "search_issues", Name: "github_search_issues", Outcome: "ok", Ms: 12.5, ArgBytes: 40, ResultBytes: 2000}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		l.Record(ctx, r)
		time.Sleep(50 * time.Microsecond)
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is this process's CPU time so far (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
