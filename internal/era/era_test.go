package era

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"testing"
)

func TestEras(t *testing.T) {
	for _, c := range []struct {
		version                             string
		stateless, primes, batches, session bool
	}{
		{"2024-11-05", false, false, true, true},
		{"2025-03-26", false, false, true, true},
		{"2025-06-18", false, false, false, true},
		{"2025-11-25", false, true, false, true},
		{"2026-07-28", true, false, false, false},
		{"2027-01-01", true, false, false, false},
		{"", false, false, true, false},
	} {
		if IsStateless(c.version) != c.stateless || Primes(c.version) != c.primes || Batches(c.version) != c.batches || IsSession(c.version) != c.session {
			t.Errorf("%q: stateless %v primes %v batches %v session %v", c.version, IsStateless(c.version), Primes(c.version), Batches(c.version), IsSession(c.version))
		}
		if Resumable(c.version) == c.stateless {
			t.Errorf("%q: resumable %v", c.version, Resumable(c.version))
		}
	}
	if !CancelsByClosing(Stateless, true) || CancelsByClosing(Stateless, false) || CancelsByClosing(Latest, true) {
		t.Error("cancellation: only a stateless request over HTTP is cancelled by closing it")
	}
}

// TestRequestMeta: a session-era server gets nothing of the stateless
// era in a request's _meta (its SDKs would send that era's headers on the
// older session); a stateless one gets everything it needs.
func TestRequestMeta(t *testing.T) {
	caller := Caller{Caps: map[string]any{"elicitation": map[string]any{}}, Info: map[string]string{"name": "plexus"}, LogLevel: "info"}
	if m := RequestMeta(Latest, caller); m != nil {
		t.Errorf("session era, no token: %v", m)
	}
	caller.ProgressToken = "plexus-1"
	if m := RequestMeta("2025-06-18", caller); len(m) != 1 || m["progressToken"] != "plexus-1" {
		t.Errorf("session era, a token: %v", m)
	}
	m := RequestMeta(Stateless, caller)
	want := []string{MetaClientCapabilities, MetaClientInfo, MetaLogLevel, MetaProtocolVersion, "progressToken"}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) || m[MetaProtocolVersion] != Stateless || m[MetaLogLevel] != "info" {
		t.Errorf("stateless: %v", m)
	}
	m = RequestMeta(Stateless, Caller{})
	if caps, ok := m[MetaClientCapabilities].(map[string]any); !ok || len(caps) != 0 || m[MetaLogLevel] != nil {
		t.Errorf("stateless, no capabilities or level: %v", m)
	}
}

func TestForClient(t *testing.T) {
	for _, c := range []struct{ version, in, want string }{
		{Latest, `{"content":[],"resultType":"complete","ttlMs":5,"cacheScope":"public"}`, `{"content":[]}`},
		{Latest, `{"content":[]}`, `{"content":[]}`},
		{Latest, `{"content":[{"text":"resultType"}]}`, `{"content":[{"text":"resultType"}]}`},
		{Stateless, `{"content":[]}`, `{"resultType":"complete","content":[]}`},
		{Stateless, `{}`, `{"resultType":"complete"}`},
		{Stateless, ` { } `, `{"resultType":"complete" }`},
		{Stateless, `{"resultType":"input_required","a":1}`, `{"resultType":"input_required","a":1}`},
		{Stateless, `[]`, `[]`},
	} {
		got := string(ForClient(c.version, []byte(c.in)))
		if got != c.want {
			t.Errorf("ForClient(%s, %s) = %s, want %s", c.version, c.in, got, c.want)
		}
	}
}

func FuzzForClient(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, res []byte) {
		if !json.Valid(res) {
			return
		}
		for _, v := range []string{Latest, Stateless} {
			if out := ForClient(v, res); !json.Valid(out) {
				t.Fatalf("ForClient(%s, %q) = %q", v, res, out)
			}
		}
	})
}

// TestInputRequired: a stateless server's questions read, and asked again
// as the face asks them, without params where the server sent none (break
// 5: roots/list without params failed the call).
func TestInputRequired(t *testing.T) {
	res := []byte(`{"resultType":"input_required","inputRequests":{"b":{"method":"roots/list"},"a":{"method":"elicitation/create","params":{"message":"ok?"}}},"requestState":"s1"}`)
	asks, state, ok := InputRequired(res)
	if !ok || string(state) != `"s1"` || len(asks) != 2 {
		t.Fatalf("%+v %s %v", asks, state, ok)
	}
	if asks[0].Key != "a" || asks[0].Method != "elicitation/create" || string(asks[0].Params) != `{"message":"ok?"}` ||
		asks[1].Key != "b" || asks[1].Method != "roots/list" || asks[1].Params != nil {
		t.Errorf("asks: %+v", asks)
	}
	if _, _, ok := InputRequired([]byte(`{"content":[{"type":"text","text":"input_required"}]}`)); ok {
		t.Error("a complete result read as input_required")
	}
	out := InputRequiredResult(asks, "plexus-wait:x")
	again, st, ok := InputRequired(out)
	if !ok || len(again) != 2 || string(st) != `"plexus-wait:x"` || again[1].Params != nil || bytes.Contains(out, []byte(`"params":null`)) {
		t.Errorf("round trip: %s", out)
	}
	params := map[string]json.RawMessage{"name": []byte(`"t"`), "inputResponses": []byte(`{"old":{}}`)}
	Retry(params, map[string]json.RawMessage{"a": []byte(`{"action":"accept"}`)}, state)
	answers, s := Responses(params)
	if s != "s1" || string(answers["a"]) != `{"action":"accept"}` || answers["old"] != nil {
		t.Errorf("retry: %s", params)
	}
	Retry(params, nil, nil)
	if _, has := params["requestState"]; has {
		t.Errorf("a retry without state keeps one: %s", params)
	}
}

func TestAskParams(t *testing.T) {
	for in, want := range map[string]string{"": ``, "null": ``, " ": ``, `{"a":1}`: `{"a":1}`} {
		if got := string(AskParams(json.RawMessage(in))); got != want {
			t.Errorf("AskParams(%q) = %s", in, got)
		}
	}
}

// TestServerHeaders: a request to a session-era server carries that
// server's version and none of the stateless era's headers, whatever the
// SDK added (break 2); a stateless server's keep the SDK's.
func TestServerHeaders(t *testing.T) {
	h := http.Header{"Mcp-Protocol-Version": {Stateless}, "Mcp-Method": {"resources/read"}, "Mcp-Name": {"x"}, "Mcp-Param-Region": {"eu"}, "Mcp-Session-Id": {"s"}}
	if !HeadersDiffer(h, Latest) {
		t.Fatal("stateless headers to a session-era server: no difference seen")
	}
	ServerHeaders(h, Latest)
	if h.Get("Mcp-Protocol-Version") != Latest || len(h) != 2 || h.Get("Mcp-Session-Id") != "s" {
		t.Errorf("to a session-era server: %v", h)
	}
	if HeadersDiffer(h, Latest) {
		t.Error("right headers seen as different")
	}
	s := http.Header{"Mcp-Method": {"tools/call"}}
	if !HeadersDiffer(s, Stateless) {
		t.Error("a missing version: no difference seen")
	}
	ServerHeaders(s, Stateless)
	if s.Get("Mcp-Protocol-Version") != Stateless || s.Get("Mcp-Method") != "tools/call" || HeadersDiffer(s, Stateless) {
		t.Errorf("to a stateless server: %v", s)
	}
}
