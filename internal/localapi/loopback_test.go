package localapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLoopbackGuard follows the DNS-rebinding and CSRF rows of the threat
// table: a foreign Host or a present-but-foreign Origin is refused with
// 403, a missing or wrong token with 401, and only the daemon's own origin
// with the token gets through.
func TestLoopbackGuard(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	l := NewLoopback(token, slog.New(slog.DiscardHandler))
	l.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	for _, tc := range []struct {
		name, host, origin, auth string
		want                     int
	}{
		{"own", "127.0.0.1:7780", "", "Bearer " + token, 200},
		{"localhost", "localhost:7780", "http://localhost:7780", "Bearer " + token, 200},
		{"ipv6", "[::1]:7780", "", "Bearer " + token, 200},
		{"no token", "127.0.0.1:7780", "", "", 401},
		{"wrong token", "127.0.0.1:7780", "", "Bearer x" + token[1:], 401},
		{"basic auth", "127.0.0.1:7780", "", "Basic " + token, 401},
		{"rebinding host", "evil.example:7780", "", "Bearer " + token, 403},
		{"rebinding host and origin", "evil.example:7780", "http://evil.example:7780", "Bearer " + token, 403},
		{"lan host", "192.168.1.5:7780", "", "Bearer " + token, 403},
		{"foreign origin", "127.0.0.1:7780", "https://evil.example", "Bearer " + token, 403},
		{"other loopback port origin", "127.0.0.1:7780", "http://127.0.0.1:9999", "Bearer " + token, 403},
		{"null origin", "127.0.0.1:7780", "null", "Bearer " + token, 403},
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		l.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.want)
		}
	}
}

// TestOtherSpellingsOfLoopbackHostAreRefused guards DNS rebinding through a
// name that resolves to a loopback address other than the three a client
// writes: over a real connection, only 127.0.0.1, [::1] and localhost pass.
func TestOtherSpellingsOfLoopbackHostAreRefused(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	l := NewLoopback(token, slog.New(slog.DiscardHandler))
	l.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv := httptest.NewServer(l)
	defer srv.Close()
	for host, want := range map[string]int{
		"127.0.0.1:7780":          200,
		"127.0.0.1":               200,
		"localhost:7780":          200,
		"LOCALHOST:7780":          200,
		"[::1]:7780":              200,
		"[::1]":                   200,
		"[::ffff:127.0.0.1]:7780": 403,
		"[::ffff:7f00:1]:7780":    403,
		"127.0.0.2:7780":          403,
		"127.1.2.3:7780":          403,
		"127.1:7780":              403,
		"2130706433:7780":         403,
		"0x7f000001:7780":         403,
		"localhost.:7780":         403,
		"127.0.0.1:x":             403,
		"127.0.0.1:99999":         403,
		"::1":                     403,
	} {
		req, err := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}
