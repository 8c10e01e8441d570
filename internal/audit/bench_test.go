package audit

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// BenchmarkRecord is what a call pays for its record, on its own path:
// filling in who and handing the record to the writer's queue (the
// writer's JSON and the file's write are off the path, in its goroutine).
func BenchmarkRecord(b *testing.B) {
	l, ctx, r := benchLog(b, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		l.Record(ctx, r)
	}
}

// benchLog opens a log of queue records for a benchmark, with a call's
// context and record.
func benchLog(b *testing.B, queue int) (*Log, context.Context, Record) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), "audit.jsonl"), Queue: queue})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	ctx := caller.With(context.Background(), caller.Identity{User: "ann@example.com"})
	ctx = WithClient(ctx, Client{Name: "claude-code", Version: "2.1", Profile: "dev", Session: "s1"})
	return l, ctx, Record{Kind: KindToolCall, Server: "github", Tool: "search_issues", Name: "github_search_issues", Outcome: "ok", Ms: 12.5, ArgBytes: 40, ResultBytes: 2000}
}

// BenchmarkEncodeRecord is the writer's encoding of a call's record:
// encoding/json (as it was) against appendRecord (as it is).
func BenchmarkEncodeRecord(b *testing.B) {
	r := Record{Time: time.Now(), Kind: KindToolCall, Member: "ann@example.com", Client: "claude-code", ClientVersion: "2.1",
		Profile: "dev", Session: "s1", Server: "github", Tool: "search_issues", Name: "github_search_issues", Outcome: "ok",
		Ms: 12.5, ArgBytes: 40, ResultBytes: 2000}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			line, _ := json.Marshal(&r)
			buf = append(append(buf[:0], line...), '\n')
		}
	})
	b.Run("appendRecord", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = appendRecord(buf[:0], &r)
			buf = append(buf, '\n')
		}
	})
}
