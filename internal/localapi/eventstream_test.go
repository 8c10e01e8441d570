package localapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestEventStreamKeepAlive: an idle event stream gets a keep-alive
// comment every keepAlive, and events in between; it ends with the
// client.
func TestEventStreamKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		r := httptest.NewRequest("GET", "/v1/events", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		ch := make(chan string)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s := openEventStream(w, "test")
			follow(r, s, ch, func(v string) bool { return s.send("x", []byte(v)) }, nil, nil)
		}()
		time.Sleep(2*keepAlive + time.Second)
		ch <- `"one"`
		time.Sleep(keepAlive)
		cancel()
		<-done
		want := ": test\n\n: keep-alive\n\n: keep-alive\n\nevent: x\ndata: \"one\"\n\n: keep-alive\n\n"
		if got := w.Body.String(); got != want {
			t.Errorf("stream %q, want %q", got, want)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Content-Type %q", ct)
		}
	})
}
