package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

type noServers struct{}

func (noServers) Servers() (int64, []apitype.ServerStatus) { return 0, nil }

// TestObserveCountsEachSeries: each call and face request counts in the
// series of its own labels, however many came before it with others.
func TestObserveCountsEachSeries(t *testing.T) {
	m := New(noServers{})
	for range 3 {
		m.ObserveCall("a", "frame", "ok", time.Millisecond)
	}
	m.ObserveCall("a", "frame", "timeout", time.Second)
	m.ObserveCall("b", "decoded", "ok", 2*time.Second)
	m.ObserveFace("frame", "call")
	m.ObserveFace("frame", "call")
	m.ObserveFace("pages", "list")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`plexus_calls_total{outcome="ok",path="frame",server="a"} 3`,
		`plexus_calls_total{outcome="timeout",path="frame",server="a"} 1`,
		`plexus_calls_total{outcome="ok",path="decoded",server="b"} 1`,
		`plexus_call_duration_seconds_count{server="a"} 4`,
		`plexus_call_duration_seconds_count{server="b"} 1`,
		`plexus_call_duration_seconds_bucket{server="a",le="0.001"} 3`,
		`plexus_face_requests_total{path="frame",reason="call"} 2`,
		`plexus_face_requests_total{path="pages",reason="list"} 1`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("the metrics lack %s", want)
		}
	}
}

// BenchmarkObserveCall: what a call pays for its metrics (its count, its
// latency and its face request's count).
func BenchmarkObserveCall(b *testing.B) {
	m := New(noServers{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveCall("wide25", "frame", "ok", 300*time.Microsecond)
		m.ObserveFace("frame", "a tools/call of a session")
	}
}
