package face

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestCallOfADroppedPOSTTiedAfterItEnded: the SDK names a POST's stream
// (its priming event) before it hands the request to a handler, so a
// client cut right after that event has a POST that ended before its
// handler tied the call to it. The call is then kept for the client's
// resumption as if it had been tied in time: cancelled after
// resumeWindow unless the client resumed, and run to its end if it did.
// A POST that named no stream cannot be resumed: its call is cancelled at
// once.
func TestCallOfADroppedPOSTTiedAfterItEnded(t *testing.T) {
	// post marks a POST of session "s", lets its events name stream (if
	// not ""), drops its connection and ends its handler, and returns the
	// header its request carries to the handler.
	post := func(l *requestLives, stream string) http.Header {
		ctx, drop := context.WithCancel(context.Background())
		r := httptest.NewRequestWithContext(ctx, "POST", "/mcp", nil)
		r.Header.Set("Mcp-Session-Id", "s")
		life, forget := l.mark(r)
		if stream != "" {
			l.named(life, stream)
		}
		drop()
		forget()
		return r.Header.Clone()
	}

	t.Run("resumed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var l requestLives
			ctx, cancel := l.tie(context.Background(), post(&l, "1"))
			defer cancel()
			if ctx.Err() != nil {
				t.Fatal("a call whose POST named a stream was cancelled when tied after the POST ended")
			}
			time.Sleep(time.Second) // the client reconnects
			l.resume(streamKey{"s", "1"})
			time.Sleep(2 * resumeWindow)
			if ctx.Err() != nil {
				t.Fatal("a resumed call was cancelled")
			}
		})
	})
	t.Run("not resumed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var l requestLives
			ctx, cancel := l.tie(context.Background(), post(&l, "1"))
			defer cancel()
			time.Sleep(resumeWindow - time.Millisecond)
			if ctx.Err() != nil {
				t.Fatal("the call was cancelled before its client could resume it")
			}
			time.Sleep(time.Millisecond)
			synctest.Wait()
			if ctx.Err() == nil {
				t.Fatal("a call whose client did not resume was not cancelled after resumeWindow")
			}
		})
	})
	t.Run("no stream", func(t *testing.T) {
		var l requestLives
		ctx, cancel := l.tie(context.Background(), post(&l, ""))
		defer cancel()
		if ctx.Err() == nil {
			t.Fatal("a call whose POST named no stream, and cannot be resumed, was not cancelled at once")
		}
	})
}
