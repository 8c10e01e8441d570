package mcpbridge

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestQuietAfterEachBurst: Quiet is called once the bridge has been quiet
// for QuietAfter — after its start, and again after a burst of messages —
// and not while messages keep going through.
func TestQuietAfterEachBurst(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&fakeFace{})
	defer srv.Close()
	in, feed := io.Pipe()
	out := &lines{}
	var quiet atomic.Int32
	b := &Bridge{HTTP: srv.Client(), URL: srv.URL + "/mcp", Quiet: func() { quiet.Add(1) }, QuietAfter: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), in, out) }()
	waitQuiet := func(n int32) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); quiet.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("Quiet was called %d times, want %d", quiet.Load(), n)
			}
		}
	}
	waitQuiet(1) // after the start
	fmt.Fprintln(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	// Messages 10 ms apart for a third of a second: no quiet 100 ms,
	// unless the machine stalled this loop that long.
	var longest time.Duration
	last := time.Now()
	for i := range 30 {
		fmt.Fprintf(feed, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i+2)
		time.Sleep(10 * time.Millisecond)
		longest, last = max(longest, time.Since(last)), time.Now()
	}
	if n := quiet.Load(); n != 1 && longest < b.QuietAfter {
		t.Fatalf("Quiet was called %d times while messages went through at most %v apart, want 1 (the start's)", n, longest)
	}
	waitQuiet(2) // after the burst
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
