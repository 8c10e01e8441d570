package upstream

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzSameOrigin: the check that refuses a legacy SSE server's endpoint
// elsewhere is symmetric, and passes only URLs with the server's scheme,
// host name and effective port.
func FuzzSameOrigin(f *testing.F) {
	f.Add("http://127.0.0.1:8080/sse", "http://127.0.0.1:8080/msg?s=1")
	f.Add("http://127.0.0.1:8080/sse", "http://127.0.0.2:8080/msg")
	f.Add("http://example.com/sse", "http://EXAMPLE.com:80/msg")
	f.Add("https://example.com/sse", "http://example.com:443/msg")
	f.Add("http://[::1]:1/sse", "http://[::1]:2/msg")
	f.Add("http://a@example.com/sse", "http://b@example.com/msg")
	f.Fuzz(func(t *testing.T, server, endpoint string) {
		a, err1 := url.Parse(server)
		b, err2 := url.Parse(endpoint)
		if err1 != nil || err2 != nil {
			return
		}
		same := sameOrigin(a, b)
		if same != sameOrigin(b, a) {
			t.Fatalf("sameOrigin(%q, %q) is not symmetric", server, endpoint)
		}
		if same && (!strings.EqualFold(a.Scheme, b.Scheme) || !strings.EqualFold(a.Hostname(), b.Hostname())) {
			t.Fatalf("%q and %q passed as one origin", server, endpoint)
		}
	})
}
