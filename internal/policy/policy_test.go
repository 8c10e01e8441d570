package policy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/plexus-mcp/plexus/internal/config"
)

func TestDecide(t *testing.T) {
	yes, no := true, false
	p := Compile(&config.Policy{Rules: []config.PolicyRule{
		{Tool: "fs_read_*", Action: config.PolicyAllow},
		{Tool: "fs_*", Client: "claude-*", Action: config.PolicyDeny},
		{Profile: "work", Destructive: &yes, Action: config.PolicyAskEvery},
		{Tool: "gh_?", Destructive: &no, Action: config.PolicyDeny},
		{Tool: "gh_*", Action: config.PolicyAskOnce},
	}})
	readOnly := json.RawMessage(`{"readOnlyHint": true}`)
	notDestructive := json.RawMessage(`{"destructiveHint": false}`)
	tests := []struct {
		call       Call
		action     string
		rule       string
		whyMatched string
	}{
		{Call{Tool: "fs_read_file", Client: "claude-code"}, config.PolicyAllow, "mcp.policy.rules[0]", "first match wins over the deny after it"},
		{Call{Tool: "fs_write_file", Client: "claude-code"}, config.PolicyDeny, "mcp.policy.rules[1]", "tool and client globs"},
		{Call{Tool: "fs_write_file", Client: "cursor"}, config.PolicyAllow, "", "no rule: allowed"},
		{Call{Tool: "x_rm", Profile: "work"}, config.PolicyAskEvery, "mcp.policy.rules[2]", "no annotations: destructive by MCP's default"},
		{Call{Tool: "x_ls", Profile: "work", Annotations: readOnly}, config.PolicyAllow, "", "read-only is not destructive"},
		{Call{Tool: "x_ls", Profile: "work", Annotations: notDestructive}, config.PolicyAllow, "", "destructiveHint false"},
		{Call{Tool: "x_read", Profile: "work", NotATool: true}, config.PolicyAllow, "", "a resource read is not destructive"},
		{Call{Tool: "x_rm", Profile: "home"}, config.PolicyAllow, "", "profile glob"},
		{Call{Tool: "gh_a", Annotations: readOnly}, config.PolicyDeny, "mcp.policy.rules[3]", "? and destructive false"},
		{Call{Tool: "gh_ab", Annotations: readOnly}, config.PolicyAskOnce, "mcp.policy.rules[4]", "? is one character"},
		{Call{Tool: "gh_a", Annotations: json.RawMessage(`not json`)}, config.PolicyAskOnce, "mcp.policy.rules[4]", "unreadable annotations: destructive"},
		{Call{Tool: "fs_write_file"}, config.PolicyAllow, "", "an unknown client matches no client glob but *"},
	}
	for _, tt := range tests {
		d := p.Decide(tt.call)
		if d.Action != tt.action || d.Rule != tt.rule {
			t.Errorf("%s: Decide(%+v) = %+v, want %s by %q", tt.whyMatched, tt.call, d, tt.action, tt.rule)
		}
	}
	if Compile(&config.Policy{}) != nil || Compile(nil) != nil {
		t.Error("an empty policy compiles to non-nil: the pipeline's fast path is lost")
	}
	if d := (*Policy)(nil).Decide(Call{Tool: "x"}); d.Action != config.PolicyAllow {
		t.Errorf("nil policy decides %+v", d)
	}
}

func TestLimiter(t *testing.T) {
	cfg := &config.Policy{Limits: []config.RateLimit{
		{Tool: "gh_*", Calls: 3, WindowMs: 60000},
		{Client: "bot", Calls: 1, WindowMs: 1000},
	}}
	p := Compile(cfg)
	var l Limiter
	now := time.Unix(1000, 0)
	a := Call{Tool: "gh_issue", Client: "a"}
	for i := range 3 {
		if r := l.Take(p, a, now); r != nil {
			t.Fatalf("call %d refused: %+v", i, r)
		}
	}
	r := l.Take(p, a, now)
	if r == nil || r.Limit != "mcp.policy.limits[0]" || r.RetryAfter != 20*time.Second {
		t.Fatalf("4th call in the window: %+v, want limits[0] and a retry after 20s (one call refills every 60s/3)", r)
	}
	if r := l.Take(p, Call{Tool: "gh_issue", Client: "b"}, now); r != nil {
		t.Errorf("another client shares a's count: %+v", r)
	}
	if r := l.Take(p, Call{Tool: "fs_ls", Client: "a"}, now); r != nil {
		t.Errorf("a tool the limit does not match is limited: %+v", r)
	}
	if r := l.Take(p, a, now.Add(19*time.Second)); r == nil || r.RetryAfter != time.Second {
		t.Errorf("after 19s: %+v, want a retry after 1s", r)
	}
	// A reload that keeps the limit keeps its count; one that changes it
	// starts afresh.
	if r := l.Take(Compile(cfg.Clone()), a, now.Add(20*time.Second)); r != nil {
		t.Errorf("after 20s one call has refilled: %+v", r)
	}
	if r := l.Take(Compile(cfg.Clone()), a, now.Add(20*time.Second)); r == nil {
		t.Error("the refilled call was counted twice")
	}
	changed := cfg.Clone()
	changed.Limits[0].Calls = 4
	if r := l.Take(Compile(changed), a, now.Add(20*time.Second)); r != nil {
		t.Errorf("a changed limit kept the old count: %+v", r)
	}
	// Over two limits at once: the longer wait is said, and a refused call
	// is not counted against the limit it was within.
	bot := Call{Tool: "gh_x", Client: "bot"}
	if r := l.Take(p, bot, now); r != nil {
		t.Fatal(r)
	}
	r = l.Take(p, bot, now)
	if r == nil || r.Limit != "mcp.policy.limits[1]" {
		t.Fatalf("bot's 2nd call in a second: %+v", r)
	}
	for range 2 {
		if r := l.Take(p, bot, now.Add(time.Second)); r != nil {
			t.Fatalf("bot's refused call was counted: %+v", r)
		}
		now = now.Add(time.Second)
	}
}

func TestLimiterBounded(t *testing.T) {
	p := Compile(&config.Policy{Limits: []config.RateLimit{{Calls: 1, WindowMs: 1000}}})
	var l Limiter
	now := time.Unix(0, 0)
	for i := range maxBuckets + 10 {
		l.Take(p, Call{Tool: "t", Client: "c" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}, now)
	}
	if n := len(l.buckets); n > maxBuckets {
		t.Errorf("%d buckets, want at most %d", n, maxBuckets)
	}
}

func TestSummary(t *testing.T) {
	const canary = "canary-7f3a9c"
	args := json.RawMessage(`{"path": "/home/ada/notes.txt", "apiKey": "` + canary + `", "header": "Bearer abcdefgh12345678",
		"gh": "ghp_abcdefghijklmnop", "n": 3, "opts": {"a": 1, "b": 2}, "list": [1, 2, 3], "long": "` + strings.Repeat("é", 200) + `"}`)
	s := Summary(args, 400)
	for _, want := range []string{`path="/home/ada/notes.txt"`, "apiKey=" + Redacted, "header=" + Redacted, "gh=" + Redacted, "n=3", "opts={2 keys}", "list=[3 items]", "long=\"éé"} {
		if !strings.Contains(s, want) {
			t.Errorf("Summary = %s\nwant it to hold %s", s, want)
		}
	}
	if strings.Contains(s, canary) || strings.Contains(s, "abcdefgh12345678") || strings.Contains(s, "ghp_") {
		t.Errorf("Summary shows a secret: %s", s)
	}
	if len(s) > 400 || !utf8.ValidString(s) {
		t.Errorf("Summary is %d bytes or not UTF-8", len(s))
	}
	if s := Summary(args, 30); len(s) > 30 || !strings.HasSuffix(s, "…") {
		t.Errorf("Summary(30) = %q", s)
	}
	for in, want := range map[string]string{"": "no arguments", "{}": "no arguments", "null": "no arguments", "[1]": "arguments that are not a JSON object"} {
		if got := Summary(json.RawMessage(in), 100); got != want {
			t.Errorf("Summary(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSummary checks that a summary of any arguments is bounded, valid
// UTF-8, and never shows a value under a secret's name.
func FuzzSummary(f *testing.F) {
	for _, s := range []string{`{"a": "b"}`, `{"token": "xyz"}`, `{"a": {"b": [1]}}`, `{"é": "` + strings.Repeat("日", 50) + `"}`, `[`, `{"a": "\ud800"}`} {
		f.Add([]byte(s), 64)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		n = 16 + (n&0xff)%512
		s := Summary(data, n)
		if len(s) > n || !utf8.ValidString(s) && utf8.Valid(data) {
			t.Fatalf("Summary(%q, %d) = %q", data, n, s)
		}
		var m map[string]string
		if json.Unmarshal(data, &m) == nil && m["password"] != "" && len(m["password"]) > 3 && strings.Contains(s, m["password"]) && !strings.Contains("password="+Redacted, m["password"]) {
			t.Fatalf("Summary shows the password: %q", s)
		}
	})
}

// BenchmarkGate is the policy's share of a call with a few rules and
// limits: four rules that do not match, one that allows, and two limits
// the call is counted against (the pipeline's gate without the question).
func BenchmarkGate(b *testing.B) {
	yes := true
	p := Compile(&config.Policy{
		Rules: []config.PolicyRule{
			{Tool: "github_*", Action: config.PolicyDeny},
			{Client: "claude-*", Tool: "fs_write_*", Action: config.PolicyAskEvery},
			{Profile: "work", Destructive: &yes, Action: config.PolicyAskOnce},
			{Tool: "*_delete_*", Action: config.PolicyDeny},
			{Tool: "example_*", Client: "bench", Action: config.PolicyAllow},
		},
		Limits: []config.RateLimit{{Tool: "example_*", Calls: 1 << 30, WindowMs: 1000}, {Client: "b*", Calls: 1 << 30, WindowMs: 60000}},
	})
	var l Limiter
	c := Call{Tool: "example_echo", Client: "bench", Profile: "default", Annotations: json.RawMessage(`{"readOnlyHint":true}`)}
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide(c); d.Action != config.PolicyAllow {
			b.Fatal(d)
		}
		if r := l.Take(p, c, time.Now()); r != nil {
			b.Fatal(r)
		}
	}
}
