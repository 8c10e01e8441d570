package face

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/host"
	"github.com/plexus-mcp/plexus/internal/recovery"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The face's fuzz targets send whole client messages through the face
// as the daemon serves it: a host running the example server, three
// profiles (the default, a bare one of that one server, one of meta
// tools), every middleware of production, real HTTP. The property: no
// panic anywhere — the SDK and the face serve messages on goroutines of
// their own, where a panic ends the process (the fuzzer reports that as a
// crash) or is recovered and logged as a bug, which fails the input here
// as net/http's "panic serving" does — and the face still answers a
// tools/list afterwards.

// fuzzFace is the face under test.
type fuzzFace struct {
	url  string
	bugs *bugLines
}

// bugLines keeps the lines of the face's log and of its HTTP server's
// that tell of a panic.
type bugLines struct {
	mu    sync.Mutex
	lines []string
}

func (b *bugLines) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(recovery.Bug)) || bytes.Contains(p, []byte("panic")) {
		b.mu.Lock()
		b.lines = append(b.lines, string(p))
		b.mu.Unlock()
	}
	return len(p), nil
}

func (b *bugLines) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.lines
	b.lines = nil
	return l
}

func newFuzzFace(f *testing.F) *fuzzFace {
	bin := testenv.Binary(f)
	cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{
		"face":     map[string]any{"allowExternalCall": true, "allowWrite": true},
		"servers":  map[string]any{"ex": map[string]any{"type": "stdio", "command": bin, "args": []string{"example-server"}}},
		"profiles": map[string]any{"bare": map[string]any{"servers": []string{"ex"}, "naming": "bare"}, "meta": map[string]any{"metaTools": true}},
	}})
	st := testStore(f, cfg)
	bugs := &bugLines{}
	lg := slog.New(slog.NewTextHandler(bugs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := host.New(host.Options{Store: st, Shim: []string{bin, "__plexus-shim"}, Logger: lg})
	f.Cleanup(h.Close)
	h.Start(f.Context())
	fc := New(h, lg, "test")
	f.Cleanup(fc.Close)
	srv := httptest.NewUnstartedServer(fc)
	srv.Config.ErrorLog = log.New(bugs, "", 0)
	srv.Start()
	f.Cleanup(srv.Close)
	ff := &fuzzFace{url: srv.URL + Path, bugs: bugs}
	deadline := time.Now().Add(30 * time.Second)
	for !bytes.Contains(ff.toolsList(), []byte("echo")) {
		if time.Now().After(deadline) {
			f.Fatalf("the face lists no echo tool of the example server in 30 s: %s", ff.toolsList())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ff
}

// toolsList is the default profile's answer to a stateless tools/list.
func (ff *fuzzFace) toolsList() []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b := ff.send(ctx, "POST", "", eraStateless, "tools/list", []byte(listBody("1", "", "", true)))
	return b
}

// Eras of a fuzzed message: how it is sent.
const (
	eraStateless = iota // MCP 2026-07-28 headers, no session
	eraSession          // MCP 2025-11-25, in a session opened for it
	eraBare             // no MCP headers at all
	eraUnknown          // a session id the face never minted
)

// send sends one HTTP request of era to profile and returns its status
// and body (0 and nil if it failed or took longer than ctx).
func (ff *fuzzFace) send(ctx context.Context, verb, profile string, era int, method string, body []byte) (int, []byte) {
	return ff.sendIn(ctx, verb, profile, era, method, "", "2025-11-25", body)
}

// sendIn sends it in session sid of MCP version.
func (ff *fuzzFace) sendIn(ctx context.Context, verb, profile string, era int, method, sid, version string, body []byte) (int, []byte) {
	url := ff.url
	if profile != "" {
		url += "/" + profile
	}
	req, err := http.NewRequestWithContext(ctx, verb, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch era {
	case eraStateless:
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
	case eraSession:
		req.Header.Set("Mcp-Protocol-Version", version)
	case eraUnknown:
		sid = "no-such-session"
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if verb == "POST" && strings.Contains(string(body), `"initialize"`) {
		return resp.StatusCode, []byte(resp.Header.Get("Mcp-Session-Id"))
	}
	return resp.StatusCode, b
}

// exercise sends body (in a session of its own for eraSession) as the
// client of era, then wants no panic logged and a tools/list answered.
func (ff *fuzzFace) exercise(t *testing.T, profile string, era int, verb, method string, body []byte) {
	ff.exerciseIn(t, profile, era, "2025-11-25", verb, method, body)
}

// exerciseIn is exercise whose session, if any, is of MCP version.
func (ff *fuzzFace) exerciseIn(t *testing.T, profile string, era int, version, verb, method string, body []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // a call may wait for input
	defer cancel()
	var sid string
	if era == eraSession {
		_, s := ff.sendIn(ctx, "POST", profile, era, "initialize", "", version, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"fuzz","version":"1"}}}`))
		sid = string(s)
		ff.sendIn(ctx, "POST", profile, era, "", sid, version, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	ff.sendIn(ctx, verb, profile, era, method, sid, version, body)
	if sid != "" {
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
		status, _ := ff.sendIn(dctx, "DELETE", profile, era, "", sid, version, nil)
		dcancel()
		if status == 0 {
			t.Errorf("the session's DELETE after %s %q was not answered in 30 s; goroutines:\n%s", verb, body, goroutines())
		}
	}
	if l := ff.toolsList(); !bytes.Contains(l, []byte("echo")) {
		t.Errorf("tools/list after %s %q: %s; goroutines:\n%s", verb, body, l, goroutines())
	}
	if bugs := ff.bugs.take(); len(bugs) > 0 {
		t.Errorf("%s %q (era %d, profile %q) reached a bug:\n%s", verb, body, era, profile, strings.Join(bugs, "\n"))
	}
}

var fuzzProfiles = []string{"", "bare", "meta"}

// FuzzFaceBody sends arbitrary bytes as a message's body; mode picks the
// era, the profile and the HTTP method, method the Mcp-Method header.
func FuzzFaceBody(f *testing.F) {
	ff := newFuzzFace(f)
	for i, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_ex_echo","arguments":{"text":"x"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
		`{"jsonrpc":"2.0","id":"a","result":{"action":"accept","content":{}}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`,
		listBody("3", "bogus-cursor", "", true),
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"plexus://example/readme"}}`,
		`[]`, `null`, `{}`, `"x"`, ``,
	} {
		method := "tools/list"
		var m struct{ Method string }
		if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
			method = m.Method
		}
		f.Add(uint8(i), method, []byte(body))
	}
	f.Fuzz(func(t *testing.T, mode uint8, method string, body []byte) {
		verb := "POST"
		if mode&0x40 != 0 {
			verb = [...]string{"GET", "DELETE"}[mode>>7]
		}
		ff.exercise(t, fuzzProfiles[int(mode>>2&3)%len(fuzzProfiles)], int(mode&3), verb, method, body)
	})
}

// fuzzMethods are the methods and notifications a client may send, in
// both eras; "" is a client's answer to a request of the face's.
var fuzzMethods = []string{"", "initialize", "ping", "server/discover", "tools/list", "tools/call",
	"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "subscriptions/listen",
	"tasks/get", "tasks/list", "tasks/cancel", "tasks/result",
	"notifications/initialized", "notifications/cancelled", "notifications/progress",
	"notifications/roots/list_changed", "notifications/elicitation/complete", "no/such/method"}

// fuzzParams are params of every shape: absent, null, of the wrong type,
// wrongly typed members, nested deep, huge, and those of a real message
// (the stateless era's _meta; a call of the example server's tools).
var fuzzParams = []string{"", "null", "7", `"x"`, "[]", "{}",
	`{"_meta":` + strings.TrimPrefix(listMeta, `"_meta":`) + `}`,
	`{"_meta":null,"name":null,"uri":null,"arguments":null,"ref":null,"cursor":null}`,
	`{"_meta":7,"name":7,"uri":[],"arguments":"x","ref":1,"cursor":{},"level":9,"progressToken":{},"requestId":[],"taskId":true,"inputResponses":7,"requestState":[]}`,
	`{"name":"mcp_ex_ask","arguments":{}}`, `{"name":"echo","arguments":{"text":"x"},"task":{"ttl":-1}}`,
	`{"uri":"plexus://example/readme"}`, `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"text","value":"x"}}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"name":"` + strings.Repeat("x", 1<<20) + `"}`}

// fuzzIDs are ids of every JSON type, and none.
var fuzzIDs = []string{"", "null", "1", "-1", "1.5", "1e400", `"s"`, `""`, "true", "[]", "{}", `"` + strings.Repeat("i", 4096) + `"`}

// FuzzFaceMessage sends a message built of a method, params and an id
// (extra is the params when params is past the list), alone or in a
// batch; mode picks the era and the profile.
func FuzzFaceMessage(f *testing.F) {
	ff := newFuzzFace(f)
	k := 0
	for m := range fuzzMethods {
		for _, p := range []int{0, 1, 8} {
			f.Add(uint8(m), uint8(p), uint8(2), uint8(k%4|k/4%3<<2|k%5/4<<4|k%7/6<<5), []byte(nil)) // a batch in one of 5
			k++
		}
	}
	f.Add(uint8(5), uint8(len(fuzzParams)), uint8(6), uint8(0x10), []byte(`{"name":"mcp_ex_sleep","arguments":{"ms":1}}`))
	f.Fuzz(func(t *testing.T, method, params, id, mode uint8, extra []byte) {
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0"`)
		if i := fuzzIDs[int(id)%len(fuzzIDs)]; i != "" {
			b.WriteString(`,"id":` + i)
		}
		if m != "" {
			b.WriteString(`,"method":"` + m + `"`)
		}
		member := ",\"params\":"
		if m == "" {
			member = [...]string{`,"result":`, `,"error":`}[mode>>7]
		}
		switch {
		case int(params) >= len(fuzzParams):
			b.WriteString(member)
			b.Write(extra)
		case fuzzParams[params] != "":
			b.WriteString(member + fuzzParams[params])
		}
		b.WriteString("}")
		body := b.Bytes()
		if mode&0x10 != 0 {
			body = fmt.Appendf(nil, `[%s,{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`, body)
		}
		// A session of MCP 2025-03-26 takes batches.
		version := [...]string{"2025-11-25", "2025-03-26"}[mode>>5&1]
		ff.exerciseIn(t, fuzzProfiles[int(mode>>2&3)%len(fuzzProfiles)], int(mode&3), version, "POST", m, body)
	})
}

// goroutines are the stacks of every goroutine: what a hung face waits on.
func goroutines() string {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
