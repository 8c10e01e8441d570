//go:build unix

package audit

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkRecordPaced is the log's whole cost of a record when records
// come as calls do, one at a time with a gap between them (50 µs here),
// not in a burst: the writer's JSON, its write(2) and its wake-up
// included. cpu-ns/op is this process's CPU time a record, the gap's own
// sleep included (the same in every run).
func BenchmarkRecordPaced(b *testing.B) {
	l, ctx, r := benchLog(b, 0)
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
