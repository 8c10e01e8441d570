package teamauth

import (
	"context"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/testenv/authserver"
)

// BenchmarkCheck is the cost of checking a token once its issuer's keys
// are held: what team mode adds to a token's first request.
func BenchmarkCheck(b *testing.B) { benchCheck(b, (*Resource).check) }

// BenchmarkCheckSeen is what it adds to the token's later requests.
func BenchmarkCheckSeen(b *testing.B) { benchCheck(b, (*Resource).checkOnce) }

func benchCheck(b *testing.B, check func(*Resource, context.Context, string) (verified, error)) {
	idp := authserver.Start(b, authserver.Options{})
	team := config.Team{Resource: resourceURL, Issuers: []string{idp.URL}}
	r := New(&team, Options{})
	tok := idp.AccessJWT("ada", resourceURL, time.Hour, map[string]any{"groups": []string{"eng", "ops"}})
	if _, err := check(r, context.Background(), tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := check(r, context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
