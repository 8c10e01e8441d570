package peer

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	cur, old := []byte("current key derived"), []byte("old key derived")
	c := NewCredentials([][]byte{cur, old})
	oldOnly := NewCredentials([][]byte{old})
	var logs bytes.Buffer
	var seen string
	h := Guard(c, slog.New(slog.NewTextHandler(&logs, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get(Header)
	}))
	const canary = "canary-3b9f-credential"
	for _, tc := range []struct {
		name, cred string
		want       int
	}{
		{"the current key's", c.send, http.StatusOK},
		{"an old key's (a replica not yet restarted)", oldOnly.send, http.StatusOK},
		{"none", "", http.StatusUnauthorized},
		{"a wrong one", canary, http.StatusUnauthorized},
		{"the right one cut short", c.send[:len(c.send)-1], http.StatusUnauthorized},
		{"another key's", NewCredentials([][]byte{[]byte("other")}).send, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen = "unset"
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
			if tc.cred != "" {
				req.Header.Set(Header, tc.cred)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d", rec.Code, tc.want)
			}
			if tc.want == http.StatusOK && seen != "" {
				t.Fatalf("the handler saw the credential %q", seen)
			}
			if tc.want != http.StatusOK && seen != "unset" {
				t.Fatal("the handler ran for a refused request")
			}
		})
	}
	if strings.Contains(logs.String(), canary) || strings.Contains(logs.String(), c.send) {
		t.Fatalf("a credential in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
}
