package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
