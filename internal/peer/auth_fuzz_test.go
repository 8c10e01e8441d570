package peer

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzGuard: whatever a request carries in Header and MemberHeader, the
// guard answers without panicking, and lets through only the request a
// replica signed, as it was signed, once.
func FuzzGuard(f *testing.F) {
	keys := NewKeys([][]byte{[]byte("fuzz key")})
	req := httptest.NewRequest("POST", "/server/x", strings.NewReader("{}"))
	keys.Sign(req, "a", "self")
	f.Add(req.Header.Get(Header), "", "{}")
	f.Add("v2.a.self.1.n.x", "", "")
	f.Add("v2....", "e30", "{}")
	// Seeds are made again in each fuzzing process, each with a nonce of
	// its own: a process may pass another's seed once, never anything
	// else, and nothing twice.
	served := 0
	passed := map[string]bool{}
	g := NewGuard(keys, "self", quiet, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))
	f.Fuzz(func(t *testing.T, cred, member, body string) {
		before := served
		r := httptest.NewRequest("POST", "/server/x", strings.NewReader(body))
		r.Header.Set(Header, cred)
		r.Header.Set(MemberHeader, member)
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, r)
		if served > before && (passed[cred] || member != "" || body != "{}" || !strings.HasPrefix(cred, "v2.a.self.")) {
			t.Fatalf("a request with %q %q %q passed", cred, member, body)
		}
		if served > before {
			passed[cred] = true
		}
		if served == before && rec.Code != http.StatusUnauthorized && rec.Code != http.StatusMisdirectedRequest {
			t.Fatalf("status %d", rec.Code)
		}
	})
}
