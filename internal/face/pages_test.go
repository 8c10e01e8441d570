//lint:file-ignore SA1019 Plexus relays what MCP 2026-07-28 deprecates (sampling, roots, logging) for the session-era clients and servers that still use it, through the deprecation window.

package face

import (
	"bufio"
	"bytes"
	"context"
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

// testProfile is a profile of n tools offered in the order given (their
// names descending), each definition written as a server might (odd white
// space, members Plexus does not model), served over real HTTP as
// ServeHTTP serves it.
func testProfile(t *testing.T, n, size int) (p *profile, url string) {
	t.Helper()
	f := &Face{log: slog.New(slog.DiscardHandler), version: "test", replay: newReplayBuffer(), ended: make(chan struct{}, 1)}
	p = &profile{f: f, name: "t", pageSize: size, sessions: map[string]*session{},
		def: definition{cap: 10, idle: time.Minute}}
	p.srv = f.newServer(&mcp.ServerOptions{PageSize: size, HasTools: true})
	p.srv.AddReceivingMiddleware(p.attach)
	get := func(*http.Request) *mcp.Server { return p.srv }
	p.stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	for i := range n {
		p.lists[toolsList].put(toolName(n-i), i, toolDef(n-i))
	}
	srv := httptest.NewServer(http.HandlerFunc(p.forward))
	t.Cleanup(srv.Close)
	t.Cleanup(p.close)
	return p, srv.URL
}

func toolName(i int) string { return fmt.Sprintf("tool_%03d", i) }

// toolDef is a tool as a server wrote it, with what the SDK's structs do
// not model.
func toolDef(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(` {"name" : %q, "description":"Tool \"%d\" <&> ü\n", "inputSchema":{ "type" : "object"},`+
		`"_meta":{"ui/resourceUri":"ui://views/%d"},"x-server":[1, 2]} `, toolName(i), i, i))
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
	if resp.Header.Get("Content-Type") == "application/json" && !strings.Contains(body, `"initialize"`) {
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

// TestPagesServeDefinitions pages through tools/list in both eras and
// wants every definition as the server wrote it — its bytes, in the
// server's order — the envelope of the client's era, and the same after
// the list changes (the SDK re-encoded and sorted them, dropping what
// its structs do not model).
func TestPagesServeDefinitions(t *testing.T) {
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
			check := func(want []json.RawMessage) {
				t.Helper()
				for era, hdr := range eras {
					stateless := era == "2026-07-28"
					cursor, pages := "", 0
					var got []json.RawMessage
					for {
						via, page, _ := post(t, url, hdr, listBody(`"p`+fmt.Sprint(pages)+`"`, cursor, "", stateless))
						if via != "pages" {
							t.Fatalf("%s page %d: answered by %s", era, pages, via)
						}
						var res map[string]json.RawMessage
						if err := json.Unmarshal(page, &res); err != nil {
							t.Fatal(err)
						}
						var tools []json.RawMessage
						json.Unmarshal(res["tools"], &tools)
						got = append(got, tools...)
						_, typed := res["resultType"]
						if typed != stateless || (res["ttlMs"] != nil) != stateless {
							t.Errorf("%s page %d: not of its era: %s", era, pages, page)
						}
						pages++
						if res["nextCursor"] == nil {
							break
						}
						json.Unmarshal(res["nextCursor"], &cursor)
					}
					if len(got) != len(want) || pages != max(1, (len(want)+2)/3) {
						t.Fatalf("%s: %d tools in %d pages, want %d", era, len(got), pages, len(want))
					}
					for i := range got {
						if !bytes.Equal(got[i], bytes.TrimSpace(want[i])) {
							t.Errorf("%s tool %d:\n got %s\nwant %s", era, i, got[i], want[i])
						}
					}
				}
			}
			var want []json.RawMessage
			for i := range n {
				want = append(want, toolDef(n-i))
			}
			check(want)
			p.syncMu.Lock()
			p.addTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			if n > 0 {
				p.lists[toolsList].drop(toolName(1)) // the last
				want = want[:n-1]
			}
			p.syncMu.Unlock()
			check(append([]json.RawMessage{json.RawMessage(`{"inputSchema":{"type":"object"},"name":"added"}`)}, want...))
		})
	}
}

// TestListCursors: a cursor of this list pages on from the tool it names
// even once the list changed; one that names no tool of it, or is no
// cursor at all, is answered -32602; an unknown session 404.
func TestListCursors(t *testing.T) {
	p, url := testProfile(t, 5, 2)
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	if via, res, _ := post(t, url, hdr, listBody("1", "not-a-cursor!", "", true)); via != "pages" || !strings.Contains(string(res), "-32602") {
		t.Errorf("bad cursor: %s %s", via, res)
	}
	// A cursor that ends no page of this rendering: paged on from.
	p.syncMu.Lock()
	p.lists[toolsList].drop(toolName(5)) // the first
	p.syncMu.Unlock()
	if _, res, _ := post(t, url, hdr, listBody("1", encodeCursor(toolName(4)), "", true)); !strings.Contains(string(res), `"tool_003"`) || !strings.Contains(string(res), `"tool_002"`) {
		t.Errorf("a cursor from before the change: %s", res)
	}
	if _, res, _ := post(t, url, hdr, listBody("1", encodeCursor(toolName(5)), "", true)); !strings.Contains(string(res), "-32602") {
		t.Errorf("a cursor of a tool gone: %s", res)
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
		t.Errorf("unknown session: %d, want 404", resp.StatusCode)
	}
}

func TestParseList(t *testing.T) {
	good := listBody(`"a-1"`, "abc", "", true)
	req, ok := parseList(readEnvelope([]byte(good)), true)
	if !ok || string(req.id) != `"a-1"` || req.cursor != "abc" {
		t.Fatalf("good: %+v %v", req, ok)
	}
	for name, body := range map[string]string{
		"session, no params":   `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		"session, null params": `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":null}`,
		"session, cursor":      `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`,
		"session, _meta":       `{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"_meta":{"progressToken":1}}}`,
	} {
		if _, ok := parseList(readEnvelope([]byte(body)), false); !ok {
			t.Errorf("%s: not taken", name)
		}
	}
	for name, body := range map[string]string{
		"no meta":          `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
		"other version":    strings.Replace(good, `"2026-07-28"`, `"2025-11-25"`, 1),
		"client a string":  strings.Replace(good, `{"name":"c","version":"1"}`, `"c"`, 1),
		"caps an array":    strings.Replace(good, `Capabilities":{}`, `Capabilities":[]`, 1),
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
	var keys []string
	var defs []json.RawMessage
	for s := 1; s <= 25; s++ {
		for i := range 200 {
			name := fmt.Sprintf("mcp_s%d_tool_%03d_abcdefgh", s, i)
			keys = append(keys, name)
			defs = append(defs, json.RawMessage(`{"name":"`+name+`","description":"Tool number `+fmt.Sprint(i)+` of a wide server: it does nothing, and says so.",`+
				`"inputSchema":{"type":"object","properties":{"count":{"description":"How many times.","type":"integer"},"path":{"description":"A path to act on.","type":"string"}}}}`))
		}
	}
	impl := &mcp.Implementation{Name: "plexus", Version: "test"}
	b.ReportAllocs()
	for b.Loop() {
		rl, err := renderList(toolsList, keys, defs, listPageSize, impl)
		if err != nil || len(rl.pages) != 5 {
			b.Fatal(err)
		}
	}
}
