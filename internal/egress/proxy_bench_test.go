package egress

import (
	"io"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkRequest is one HTTP request on a new connection to a loopback
// server, directly and through the proxy (CONNECT, and plain HTTP): what
// the proxy adds to a sandboxed server's request.
func BenchmarkRequest(b *testing.B) {
	_, addr := origin(b)
	proxy, _, _ := start(b, addr)
	pu, _ := url.Parse("http://" + proxy)
	for _, mode := range []struct {
		name   string
		target string
		tr     *http.Transport
	}{
		{"direct", "http://" + addr + "/", &http.Transport{DisableKeepAlives: true}},
		{"plain-http-via-proxy", "http://" + addr + "/", &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyURL(pu)}},
		// An https URL would go through CONNECT; the test server speaks
		// plain HTTP, so the tunnel is asked for by hand in connect.
	} {
		b.Run(mode.name, func(b *testing.B) {
			c := &http.Client{Transport: mode.tr}
			for b.Loop() {
				resp, err := c.Get(mode.target)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	b.Run("connect-tunnel", func(b *testing.B) {
		for b.Loop() {
			if status, _ := connect(b, proxy, addr); status != "200 Connection established" {
				b.Fatal(status)
			}
		}
	})
}
