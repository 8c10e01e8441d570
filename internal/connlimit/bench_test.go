package connlimit

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkRoundTrip is one small POST and its answer on a kept-alive
// loopback connection, served plainly and under the limits (a guard
// proving every request, as the daemon's do): the cost of the deadlines
// on the hot path of every call. Compare the two legs' ratio.
func BenchmarkRoundTrip(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Prove(r.Context())
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ping"}]}}`)
	})
	for _, leg := range []string{"plain", "limited"} {
		b.Run(leg, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: h}
			var serveOn net.Listener = ln
			if leg == "limited" {
				l := New(ln, "bench", Default(1024), slog.New(slog.DiscardHandler))
				srv, serveOn = l.Server(h, nil, nil), l
			}
			go srv.Serve(serveOn)
			defer srv.Close()
			url := "http://" + ln.Addr().String() + "/"
			c := &http.Client{}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}`
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
