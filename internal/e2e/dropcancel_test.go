package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// A session-era client over streamable HTTP that lets a call go by
// dropping its POST (mcp-go's client sends no notifications/cancelled)
// leaves a remote server only the closed POST to see: the go-sdk's server
// runs the call on. Through Plexus the server sees the same — Plexus's
// own POST closed, and no notifications/cancelled the client never sent.
// (Before, Plexus cancelled the call upstream: the peer matrix's cancel
// cells of mcp-go's and the TypeScript SDK 1.x's clients in front of
// remote session-era servers said "cancelled" where directly the server
// ran on.)
func TestDroppedCallIsADropUpstream(t *testing.T) {
	t.Parallel()
	url := testenv.StartPeerServer(t, "gosdk", "http")
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	e.MustRun("add", "slowhttp", url)
	e.MustRun("settings", "set", "profiles.slowhttp", `{"servers":["slowhttp"],"naming":"bare"}`)
	_, base, token := faceURL(t, e)

	// sawAfterDrop calls slow through ep, drops the call at its first
	// progress, and returns what the server noted of it 1 s later.
	sawAfterDrop := func(ep peerEndpoint, key string) string {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		s, err := connectMCPGo(ctx, ep, era2025)
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		cctx, drop := context.WithCancel(ctx)
		first := make(chan struct{})
		var once sync.Once
		go s.call(cctx, "slow", map[string]any{"key": key, "steps": 25, "ms": 100}, func(float64, float64) { once.Do(func() { close(first) }) })
		select {
		case <-first:
		case <-time.After(10 * time.Second):
			t.Fatal("no progress from slow within 10 s")
		}
		drop()
		time.Sleep(time.Second) // the face takes a dropped POST as let go after 250 ms
		st, err := s.call(ctx, "slow_status", map[string]any{"key": key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	began := time.Now()
	direct := sawAfterDrop(peerEndpoint{kind: "http", url: url}, "direct")
	t.Logf("direct took %s", time.Since(began))
	through := sawAfterDrop(peerEndpoint{kind: "http", url: base + "/mcp/slowhttp", token: token}, "plexus")
	if through != direct {
		t.Fatalf("after the client dropped its call, the server noted %q through Plexus; directly %q", through, direct)
	}
	t.Logf("the server noted %q, directly and through Plexus (%s)", direct, time.Since(began))
}
