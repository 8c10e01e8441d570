package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// countingProxy puts a reverse proxy on 127.0.0.1 in front of the HTTP
// server at target and counts the POSTs it passes on: what a test waits on
// instead of a sleep when it needs a number of requests (keep-alives) to
// have reached the server. It returns the URL to use in target's place.
func countingProxy(t *testing.T, target string) (proxied string, posts *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	posts = new(atomic.Int64)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = u.Scheme, u.Host, u.Host
		},
		FlushInterval: -1, // event streams pass at once
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := *u
	p.Scheme, p.Host = "http", srv.Listener.Addr().String()
	return p.String(), posts
}
