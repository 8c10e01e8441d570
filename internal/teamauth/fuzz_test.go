package teamauth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// FuzzCheck feeds the token check what a client may send: it must never
// panic, and whatever it takes must name the configured issuer, a user,
// and the resource it was checked for.
func FuzzCheck(f *testing.F) {
	idp := authserver.Start(f, authserver.Options{})
	team := config.Team{Resource: resourceURL, Issuers: []string{idp.URL}}
	r := New(&team, Options{MinRefresh: time.Hour})
	good := idp.AccessJWT("ada", resourceURL, time.Hour, map[string]any{"groups": []any{"eng", 7, nil}})
	parts := strings.Split(good, ".")
	for _, seed := range []string{
		good,
		idp.AccessJWT("ada", "https://other.example.com/mcp", time.Hour, nil),
		parts[0] + "." + parts[1] + ".",
		segment(map[string]string{"alg": "none"}) + "." + parts[1] + ".",
		segment(map[string]string{"alg": "HS256", "kid": "key-1"}) + "." + parts[1] + "." + parts[2],
		parts[0] + "." + segment(map[string]any{"iss": idp.URL, "exp": 1e300, "aud": []any{1, resourceURL}}) + "." + parts[2],
		"..", "a.b.c", "", strings.Repeat("A", maxToken+1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		v, err := r.check(context.Background(), tok)
		if err != nil {
			if _, ok := err.(*refusal); !ok {
				t.Fatalf("a refusal of another type: %T", err)
			}
			return
		}
		if v.id.Issuer != idp.URL || v.id.User == "" || v.exp.IsZero() {
			t.Fatalf("taken with %+v", v)
		}
	})
}

// FuzzParseClaims: any payload decodes or is refused, and the claim
// readers never panic on what it holds.
func FuzzParseClaims(f *testing.F) {
	for _, seed := range []string{`{"exp": 1, "aud": ["a", 2], "scope": "a b", "groups": "g"}`, `{"exp": "x", "scp": [null]}`, `[]`, `{} {}`, `{"nbf": -1e999}`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := parseClaims(payload)
		if err != nil {
			return
		}
		c.time("exp")
		c.time("nbf")
		c.strs("aud")
		c.scopes()
		c.str("sub")
	})
}
