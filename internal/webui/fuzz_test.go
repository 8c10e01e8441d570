package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzGuard feeds the guard arbitrary request headers: a request reaches
// the API only if its Host is loopback, its Origin (if any) is the page's
// own, it is not cross-site, a change is JSON, and it has the session.
func FuzzGuard(f *testing.F) {
	f.Add("POST", "127.0.0.1:7780", "http://127.0.0.1:7780", "same-origin", "application/json", true)
	f.Add("POST", "evil.example", "", "", "application/json", true)
	f.Add("PUT", "127.0.0.1:7780", "null", "", "text/plain", true)
	f.Add("GET", "[::1]:7780", "http://[::1]:7780", "cross-site", "", true)
	f.Add("DELETE", "localhost:7780", "http://LOCALHOST:7780/", "none", "application/json;x=\"", false)
	f.Add("GET", "127.0.0.1.evil.example", "http://user@127.0.0.1", "same-site", "", false)
	f.Fuzz(func(t *testing.T, method, host, origin, site, ctype string, withSession bool) {
		reached := false
		s := New(Options{API: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })})
		req := httptest.NewRequest("GET", "/api/v1/servers", strings.NewReader("{}"))
		req.Method = method
		req.Host = host
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", site)
		req.Header.Set("Content-Type", ctype)
		if withSession {
			code, _, err := s.auth.newCode()
			if err != nil {
				t.Fatal(err)
			}
			id, token, err := s.auth.redeem(code)
			if err != nil {
				t.Fatal(err)
			}
			req.AddCookie(&http.Cookie{Name: cookieName, Value: id})
			req.Header.Set(pageTokenHeader, token)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Header().Get("X-Frame-Options") != "DENY" || !strings.Contains(w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Fatalf("security headers missing: %v", w.Header())
		}
		if !reached {
			return
		}
		switch {
		case !withSession:
			t.Fatal("reached the API without a session")
		case checkStatus(s, req) != 0:
			t.Fatal("reached the API though the guard refuses it")
		case origin != "" && !sameOrigin(origin, host):
			t.Fatalf("reached the API from Origin %q to Host %q", origin, host)
		case site == "cross-site":
			t.Fatal("reached the API cross-site")
		case !safeMethod(method) && !jsonContent(ctype):
			t.Fatalf("a %s with Content-Type %q reached the API", method, ctype)
		}
	})
}

func checkStatus(s *Server, r *http.Request) int {
	status, _ := s.check(r)
	return status
}
