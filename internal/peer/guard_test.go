package peer

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/caller"
)

// TestGuard: the channel takes a request only with a MAC made for it by a
// replica with the store's key (the current or, during a rotation, an
// old one), for this replica, within Skew, and once; a request changed
// on the way (method, path, body, the member's Authorization, the member
// named, the session) or replayed is 401; the MAC never reaches the
// handler or the log.
func TestGuard(t *testing.T) {
	cur, old := []byte("current key derived"), []byte("old key derived")
	keys := NewKeys([][]byte{cur, old})
	oldOnly := NewKeys([][]byte{old})
	var logs bytes.Buffer
	var seen http.Header
	var member caller.Identity
	g := NewGuard(keys, "self", slog.New(slog.NewTextHandler(&logs, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		member, _ = caller.From(r.Context())
	}))
	ada := caller.Identity{Issuer: "https://idp", User: "ada", Groups: []string{"eng"}}
	sign := func(k Keys, to string, body string, id *caller.Identity) *http.Request {
		ctx := context.Background()
		if id != nil {
			ctx = caller.With(ctx, *id)
		}
		req := httptest.NewRequestWithContext(ctx, "POST", "/server/docs?x=1", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer member")
		if err := k.Sign(req, "other", to); err != nil {
			t.Fatal(err)
		}
		return req
	}
	serve := func(req *http.Request) int {
		seen = nil
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		return rec.Code
	}
	replay := func(req *http.Request, body string) *http.Request {
		again := httptest.NewRequest(req.Method, req.URL.String(), strings.NewReader(body))
		again.Header = req.Header.Clone()
		return again
	}

	good := sign(keys, "self", `{"a":1}`, &ada)
	captured, vouched := good.Header.Get(Header), good.Header.Get(MemberHeader)
	wire := replay(good, `{"a":1}`) // as it was on the wire
	if code := serve(good); code != http.StatusOK {
		t.Fatalf("a signed request: %d", code)
	}
	if seen.Get(Header) != "" || seen.Get(MemberHeader) != "" || member.User != "ada" || len(member.Groups) != 1 {
		t.Fatalf("the handler saw the MAC or the member header, or not the member: %v %+v", seen, member)
	}
	if code := serve(wire); code != http.StatusUnauthorized {
		t.Fatalf("the same request again (a replay): %d, want 401", code)
	}
	if code := serve(sign(oldOnly, "self", "{}", nil)); code != http.StatusOK {
		t.Fatalf("an old key's (a replica not yet restarted): %d", code)
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want int
	}{
		{"nothing", func() *http.Request { return httptest.NewRequest("POST", "/server/docs", nil) }, 401},
		{"the fixed credential of before", func() *http.Request {
			r := httptest.NewRequest("POST", "/server/docs", nil)
			r.Header.Set(Header, base64.RawURLEncoding.EncodeToString(cur))
			return r
		}, 401},
		{"another key's", func() *http.Request { return sign(NewKeys([][]byte{[]byte("other")}), "self", "{}", nil) }, 401},
		{"for another replica", func() *http.Request { return sign(keys, "someone", "{}", nil) }, http.StatusMisdirectedRequest},
		{"another body", func() *http.Request { return replay(sign(keys, "self", `{"a":1}`, nil), `{"a":2}`) }, 401},
		{"another path", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			r.URL.Path = "/server/secret"
			return r
		}, 401},
		{"another method", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			r.Method = "DELETE"
			return r
		}, 401},
		{"another member's token", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			r.Header.Set("Authorization", "Bearer someone")
			return r
		}, 401},
		{"a member added", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			r.Header.Set(MemberHeader, vouched)
			return r
		}, 401},
		{"another session", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			r.Header.Set("Mcp-Session-Id", "x.y")
			return r
		}, 401},
		{"a captured MAC on a new request", func() *http.Request {
			r := httptest.NewRequest("POST", "/server/docs?x=1", strings.NewReader(`{"a":1}`))
			r.Header.Set("Authorization", "Bearer member")
			r.Header.Set(Header, captured)
			return r
		}, 401},
		{"out of date", func() *http.Request {
			r := sign(keys, "self", "{}", nil)
			parts := strings.Split(r.Header.Get(Header), ".")
			parts[3] = "1"
			r.Header.Set(Header, strings.Join(parts, "."))
			return r
		}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := serve(tc.req()); code != tc.want || seen != nil {
				t.Fatalf("status %d, want %d (the handler ran: %v)", code, tc.want, seen != nil)
			}
		})
	}
	if strings.Contains(logs.String(), captured) || strings.Contains(logs.String(), strings.Split(captured, ".")[5]) {
		t.Fatalf("a MAC in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "replayed") {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
	if d := Skew; d > time.Minute {
		t.Fatalf("a MAC is good for %s", d)
	}
}
