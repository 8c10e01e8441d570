package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestChannelQuiet: the channel's stop waits while a call is served, and
// while the other replicas that hold a stream there still send requests;
// it ends once those stopped for channelQuiet, or once no stream is left;
// from its start every answer closes its connection.
func TestChannelQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c channelCalls
		release := make(chan struct{})
		h := c.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Name") == "slow" {
				<-release
			}
		}))
		send := func(method, name string) http.Header {
			r := httptest.NewRequest("POST", "/server/s", nil)
			r.Header.Set("Mcp-Method", method)
			r.Header.Set("Mcp-Name", name)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w.Result().Header
		}
		quiet := func() (bool, time.Duration) {
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), channelGrace)
			defer cancel()
			ok := c.quiet(ctx)
			return ok, time.Since(start)
		}

		if ok, took := quiet(); !ok || took != 0 {
			t.Errorf("nothing open: quiet %v after %s, want at once", ok, took)
		}
		if got := send("tools/call", "echo").Get("Connection"); got != "close" {
			t.Errorf("an answer once the channel is closing: Connection %q, want close", got)
		}

		// A stream open, and calls every half second for two seconds.
		go send("subscriptions/listen", "slow")
		go func() {
			for range 4 {
				time.Sleep(500 * time.Millisecond)
				send("tools/call", "echo")
			}
		}()
		synctest.Wait()
		if ok, took := quiet(); !ok || took < 2*time.Second+channelQuiet || took > 2*time.Second+channelQuiet+100*time.Millisecond {
			t.Errorf("a stream open, calls for 2 s: quiet %v after %s, want %s", ok, took, 2*time.Second+channelQuiet)
		}

		// A call in flight holds it to the end of its grace.
		go send("tools/call", "slow")
		synctest.Wait()
		if ok, took := quiet(); ok || took != channelGrace {
			t.Errorf("a call in flight: quiet %v after %s, want false after %s", ok, took, channelGrace)
		}
		close(release)
		synctest.Wait()

		// With no stream left, it does not wait for the quiet.
		send("tools/call", "echo")
		if ok, took := quiet(); !ok || took > 100*time.Millisecond {
			t.Errorf("no stream left: quiet %v after %s, want at once", ok, took)
		}
	})
}
