//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const listMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// testProfile is a profile of n tools with pages of size, served over real
// HTTP as ServeHTTP serves one.
func testProfile(t *testing.T, n, size int) (p *profile, url string) {
	t.Helper()
	f := &Face{log: slog.New(slog.DiscardHandler), version: "test", replay: newReplayBuffer(), ended: make(chan struct{}, 1)}
	p = &profile{f: f, name: "t", offer: map[string]*mcp.Tool{}, pageSize: size, sessions: map[string]*session{},
		def: definition{cap: 10, idle: time.Minute}}
	p.srv = f.newServer(&mcp.ServerOptions{PageSize: size, HasTools: true})
	p.srv.AddReceivingMiddleware(p.attach)
	get := func(*http.Request) *mcp.Server { return p.srv }
	p.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	nop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	for i := range n {
		tool := &mcp.Tool{Name: fmt.Sprintf("tool_%03d", n-i), Title: "Tool <&> ü",
			Description: fmt.Sprintf("Tool %d: \"quoted\", <html> & ünïcode\n", i),
			InputSchema: json.RawMessage(` { "type" : "object", "properties": {"a": {"type":"string","description":"<a>"}} } `)}
		if i%3 == 0 {
			tool.OutputSchema = json.RawMessage(`{"type":"object"}`)
			tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "ro"}
		}
		p.addTool(tool, nop)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// What the router asks of the pages first, the answer marked.
		env := readEnvelope(peekBody(r))
		var res []byte
		if stateless(r) && env.name == "tools/list" {
			res = p.listPage2026(r, env)
		} else if s := p.sessionByID(r.Header.Get("Mcp-Session-Id")); s != nil && env.name == "tools/list" {
			version, _ := s.era()
			res = p.listPage(env, version)
		}
		if res != nil {
			w.Header().Set("Test-Path", "pages")
			writeJSON(w, http.StatusOK, appendResponse(env.id, res))
			return
		}
		p.forward(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(p.close)
	return p, srv.URL
}

// post sends one JSON-RPC message and returns the path that answered
// ("pages" or "sdk") and
// the answer's result (raw, as sent), or its error.
func post(t *testing.T, url string, hdr map[string]string, body string) (via string, result json.RawMessage, sid string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	via = "sdk"
	if resp.Header.Get("Test-Path") == "pages" {
		via = "pages"
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				b = []byte(d)
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest) || json.Unmarshal(b, &msg) != nil {
		t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
	}
	if msg.Error != nil {
		return via, msg.Error, ""
	}
	return via, msg.Result, resp.Header.Get("Mcp-Session-Id")
}

func listBody(id, cursor, extraMeta string, stateless bool) string {
	var params []string
	if stateless {
		params = append(params, strings.Replace(listMeta, `"_meta":{`, `"_meta":{`+extraMeta, 1))
	} else if extraMeta != "" {
		params = append(params, `"_meta":{`+strings.TrimSuffix(extraMeta, ",")+`}`)
	}
	if cursor != "" {
		params = append(params, `"cursor":`+jsonString(cursor))
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{` + strings.Join(params, ",") + `}}`
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPagesMatchSDK pages through tools/list on both paths in both
// eras — the SDK's own (asked with a _meta key the pages path leaves to it)
// and the rendered pages — and wants the same bytes and cursors, then the
// same after the list changes.
func TestPagesMatchSDK(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p, url := testProfile(t, n, 3)
			_, _, sid := post(t, url, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			if sid == "" {
				t.Fatal("no session")
			}
			eras := map[string]map[string]string{
				"2026-07-28": {"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
				"2025-11-25": {"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sid},
			}
			check := func(wantTools int) {
				for era, hdr := range eras {
					stateless := era == "2026-07-28"
					cursor, pages, tools := "", 0, 0
					for {
						via, rendered, _ := post(t, url, hdr, listBody(`"p`+fmt.Sprint(pages)+`"`, cursor, "", stateless))
						via2, sdk, _ := post(t, url, hdr, listBody(`7`, cursor, `"progressToken":"x",`, stateless))
						if via != "pages" || via2 != "sdk" {
							t.Fatalf("%s page %d: answered by %s and %s", era, pages, via, via2)
						}
						var res, sdkRes mcp.ListToolsResult
						if err := json.Unmarshal(rendered, &res); err != nil {
							t.Fatal(err)
						}
						if err := json.Unmarshal(sdk, &sdkRes); err != nil {
							t.Fatal(err)
						}
						// The cursors are the same but for gob's type numbers.
						renderedLast, ok1 := decodeCursor(res.NextCursor)
						sdkLast, ok2 := decodeCursor(sdkRes.NextCursor)
						if renderedLast != sdkLast || ok1 != ok2 || ok1 != (res.NextCursor != "") {
							t.Fatalf("%s page %d: cursors %q (%s) and %q (%s)", era, pages, res.NextCursor, renderedLast, sdkRes.NextCursor, sdkLast)
						}
						if !bytes.Equal(rendered, bytes.Replace(sdk, []byte(sdkRes.NextCursor), []byte(res.NextCursor), 1)) {
							t.Fatalf("%s page %d differs:\nrendered %s\nsdk      %s", era, pages, rendered, sdk)
						}
						pages++
						tools += len(res.Tools)
						if res.NextCursor == "" {
							break
						}
						cursor = res.NextCursor
					}
					if tools != wantTools || pages != max(1, (wantTools+2)/3) {
						t.Errorf("%s: %d tools in %d pages, want %d", era, tools, pages, wantTools)
					}
				}
			}
			check(n)
			p.syncMu.Lock()
			p.addTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			if n > 0 {
				p.removeTools("tool_001")
			}
			p.syncMu.Unlock()
			check(n + 1 - min(n, 1))
		})
	}
}

// TestListPagesLeave checks what the rendered pages leave to the SDK: the SDK
// must answer as before (an error for a bad cursor or an unknown session).
func TestListPagesLeave(t *testing.T) {
	_, url := testProfile(t, 5, 2)
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if via, res, _ := post(t, url, hdr, listBody("1", "not-a-cursor", "", true)); via != "sdk" || !strings.Contains(string(res), "-32602") {
		t.Errorf("bad cursor: %s %s", via, res)
	}
	// A cursor of a name the list no longer has: the SDK pages on from it.
	old, _ := encodeCursor("tool_0025")
	if via, res, _ := post(t, url, hdr, listBody("1", old, "", true)); via != "sdk" || !strings.Contains(string(res), `"tool_003"`) {
		t.Errorf("stale cursor: %s %s", via, res)
	}
	// The SDK's own cursor: the SDK pages on from it.
	_, first, _ := post(t, url, hdr, listBody("1", "", `"progressToken":1,`, true))
	var res mcp.ListToolsResult
	json.Unmarshal(first, &res)
	if via, page, _ := post(t, url, hdr, listBody("1", res.NextCursor, "", true)); via != "sdk" || !strings.Contains(string(page), `"tool_003"`) {
		t.Errorf("the SDK's cursor %q: %s %s", res.NextCursor, via, page)
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(listBody("1", "", "", false)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "nope")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d, want the SDK's 404", resp.StatusCode)
	}
}

func TestParseList(t *testing.T) {
	good := listBody(`"a-1"`, "abc", "", true)
	req, ok := parseList(readEnvelope([]byte(good)), true)
	if !ok || string(req.id) != `"a-1"` || req.cursor != "abc" {
		t.Fatalf("good: %+v %v", req, ok)
	}
	if _, ok := parseList(readEnvelope([]byte(good)), false); ok {
		t.Error("a 2026-07-28 list taken on a session")
	}
	for name, body := range map[string]string{
		"session, no params":   `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		"session, null params": `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":null}`,
		"session, cursor":      `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`,
	} {
		if _, ok := parseList(readEnvelope([]byte(body)), false); !ok {
			t.Errorf("%s: not taken", name)
		}
	}
	for name, body := range map[string]string{
		"no meta":          `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
		"other version":    strings.Replace(good, `"2026-07-28"`, `"2025-11-25"`, 1),
		"log level":        listBody("1", "", `"io.modelcontextprotocol/logLevel":"info",`, true),
		"client a string":  strings.Replace(good, `{"name":"c","version":"1"}`, `"c"`, 1),
		"caps an array":    strings.Replace(good, `Capabilities":{}`, `Capabilities":[]`, 1),
		"other method":     strings.Replace(good, `tools/list`, `tools/call`, 1),
		"extra key":        strings.Replace(good, `"id":`, `"x":1,"id":`, 1),
		"extra param":      strings.Replace(good, `"cursor":`, `"x":1,"cursor":`, 1),
		"cursor a number":  strings.Replace(good, `"abc"`, `3`, 1),
		"escaped id":       strings.Replace(good, `"a-1"`, `"a\u0031"`, 1),
		"float id":         strings.Replace(good, `"a-1"`, `1.5`, 1),
		"negative id":      strings.Replace(good, `"a-1"`, `-1`, 1),
		"huge id":          strings.Replace(good, `"a-1"`, `12345678901234567`, 1),
		"null id":          strings.Replace(good, `"a-1"`, `null`, 1),
		"notification":     strings.Replace(good, `"id":"a-1",`, ``, 1),
		"batch":            "[" + good + "]",
		"bad jsonrpc":      strings.Replace(good, `"2.0"`, `"1.0"`, 1),
		"truncated":        good[:50],
		"Method uppercase": strings.Replace(good, `"method"`, `"Method"`, 1),
	} {
		if _, ok := parseList(readEnvelope([]byte(body)), true); ok {
			t.Errorf("%s: taken", name)
		}
	}
}

func FuzzParseList(f *testing.F) {
	f.Add([]byte(listBody(`"a"`, "c", "", true)), true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`), false)
	f.Fuzz(func(t *testing.T, body []byte, stateless bool) {
		req, ok := parseList(readEnvelope(body), stateless)
		if !ok {
			return
		}
		// The answer built on what was taken must be valid JSON.
		if !json.Valid(appendResponse(req.id, json.RawMessage(`{}`))) {
			t.Fatalf("invalid id %q", req.id)
		}
	})
}

// decodeCursor reads a cursor of either path: the last name it listed.
func decodeCursor(cursor string) (string, bool) {
	b, err := base64.URLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	var tok pageToken
	if gob.NewDecoder(bytes.NewReader(b)).Decode(&tok) != nil {
		return "", false
	}
	return tok.LastUID, true
}

func TestAcceptsBoth(t *testing.T) {
	for in, want := range map[string]bool{
		"application/json, text/event-stream":              true,
		"text/event-stream;q=0.9 , Application/JSON;q=1.0": true,
		"application/json":                                 false,
		"*/*":                                              true, // as the SDK reads it
		"":                                                 false,
		"application/jsonx, text/event-stream":             false,
		"application/json;charset=utf-8, text/event-stream": true,
	} {
		if got := acceptsBoth([]string{in}); got != want {
			t.Errorf("acceptsBoth(%q) = %v", in, got)
		}
	}
}

// BenchmarkRenderToolPages5000 renders the pages of a 5,000-tool list (25
// servers × 200 tools of plexus-load --serve-tools) in both eras: the
// face's work after each change of the list, once, not per request.
func BenchmarkRenderToolPages5000(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"count":{"description":"How many times.","type":"integer"},` +
		`"path":{"description":"A path to act on.","type":"string"}}}`)
	var tools []*mcp.Tool
	for s := 1; s <= 25; s++ {
		for i := range 200 {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("mcp_s%d_tool_%03d_abcdefgh", s, i), InputSchema: schema,
				Description: fmt.Sprintf("Tool number %d of a wide server: it does nothing, and says so.", i)})
		}
	}
	impl := &mcp.Implementation{Name: "plexus", Version: "test"}
	b.ReportAllocs()
	for b.Loop() {
		tp, err := renderToolPages(tools, listPageSize, impl)
		if err != nil || len(tp.pages) != 5 {
			b.Fatal(err)
		}
	}
}
