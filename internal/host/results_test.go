package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/caller"
	"github.com/plexus-mcp/plexus/internal/catalog"
)

// keptLink is the URI of the kept result a call answered with.
func keptLink(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && strings.HasPrefix(l.URI, ResultsURI) {
			return l.URI
		}
	}
	t.Fatalf("the call did not answer with a link to a kept result: %s", resultText(res))
	return ""
}

// TestKeptResultsBelongToTheirCaller: a result over its cap is read only
// by the session whose call made it, and in team mode only by the member
// who made the call. Everyone else — another session, the same session
// under another member (a stateless profile's sessions are shared), a
// caller without a session (the API's POST /v1/call) — gets exactly the
// answer an id that was never kept gets, for every page: nothing tells
// them the result exists.
func TestKeptResultsBelongToTheirCaller(t *testing.T) {
	th := newTestHost(t)
	th.create("big", th.example(map[string]any{"maxResultBytes": 4096}))
	echo := catalog.ReadableName("big", "echo")
	args := json.RawMessage(`{"text":"` + strings.Repeat("k", 20000) + `"}`)
	ctx := t.Context()
	alice := caller.With(ctx, caller.Identity{Issuer: "https://idp.example", Subject: "a1", User: "alice"})
	// Bob has Alice's user name at another issuer: identity is issuer
	// and subject, not a name.
	bob := caller.With(ctx, caller.Identity{Issuer: "https://other.example", Subject: "a1", User: "alice"})
	s1, err := th.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := th.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s1.Call(alice, echo, args)
	if err != nil {
		t.Fatal(err)
	}
	uri := keptLink(t, res)
	pg, err := s1.ReadResult(alice, uri)
	if err != nil || pg.Pages < 2 || pg.Next == "" {
		t.Fatalf("the owner reading its result: %+v, %v", pg, err)
	}
	if _, err := s1.ReadResult(alice, pg.Next); err != nil {
		t.Fatalf("the owner reading page 2: %v", err)
	}
	id := strings.TrimPrefix(uri[:strings.LastIndex(uri, "/")], ResultsURI)
	unknownID := strings.Repeat("0", len(id))
	for _, tc := range []struct {
		who string
		s   *Session
		ctx context.Context
	}{
		{"another session, same member", s2, alice},
		{"the same session, another member", s1, bob},
		{"the same session, no member", s1, ctx},
		{"another session, no member", s2, ctx},
	} {
		for _, page := range []string{"1", "2", "99"} {
			_, got := tc.s.ReadResult(tc.ctx, ResultsURI+id+"/"+page)
			_, never := tc.s.ReadResult(tc.ctx, ResultsURI+unknownID+"/"+page)
			if got == nil {
				t.Errorf("%s read page %s of the kept result", tc.who, page)
				continue
			}
			if strings.ReplaceAll(got.Error(), id, unknownID) != never.Error() {
				t.Errorf("%s, page %s: %q differs from an unknown id's %q", tc.who, page, got, never)
			}
		}
	}
	// A call without a session keeps its result for nobody's reading.
	res, err = th.Call(alice, echo, args)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.ReadResult(alice, keptLink(t, res)); err == nil {
		t.Error("a session read the result of a call made without one")
	}
}

// TestKeptResultsOfATeam: a kept result's id is what NameResults mints
// (a replica names itself in it, so that any replica knows where to send
// a read); a call another replica makes on its client's behalf is never
// capped here (that replica caps and keeps it); and a result past its
// time answers exactly as an id never kept does, with an error that
// claims nothing about it.
func TestKeptResultsOfATeam(t *testing.T) {
	th := newTestHost(t)
	th.NameResults(func() string { return "replica0123456789." + strings.Repeat("ab", 16) })
	th.results.ttl = 300 * time.Millisecond
	th.create("big", th.example(map[string]any{"maxResultBytes": 4096}))
	echo := catalog.ReadableName("big", "echo")
	args := json.RawMessage(`{"text":"` + strings.Repeat("k", 20000) + `"}`)
	s, err := th.NewSession(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Call(t.Context(), echo, args)
	if err != nil {
		t.Fatal(err)
	}
	uri := keptLink(t, res)
	if want := ResultsURI + "replica0123456789." + strings.Repeat("ab", 16) + "/1"; uri != want {
		t.Fatalf("the link is %s, want the id NameResults minted (%s)", uri, want)
	}
	if _, err := s.ReadResult(t.Context(), uri); err != nil {
		t.Fatalf("reading the result: %v", err)
	}

	whole, err := s.Call(CappedByCaller(t.Context()), echo, args)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(whole); !strings.Contains(got, strings.Repeat("k", 20000)) {
		t.Fatalf("a call for another replica was capped here: %.200s", got)
	}

	time.Sleep(500 * time.Millisecond)
	_, got := s.ReadResult(t.Context(), uri)
	_, never := s.ReadResult(t.Context(), ResultsURI+"replica0123456789."+strings.Repeat("cd", 16)+"/1")
	if got == nil {
		t.Fatal("a result past its time was read")
	}
	if strings.ReplaceAll(got.Error(), "ab", "cd") != never.Error() {
		t.Errorf("an expired result's error %q differs from an unknown id's %q", got, never)
	}
	for _, claim := range []string{"any more", "expired", "not kept"} {
		if strings.Contains(got.Error(), claim) {
			t.Errorf("the error claims %q of a result it cannot tell about: %s", claim, got)
		}
	}
	t.Logf("an expired or unknown result: %v", got)
}
