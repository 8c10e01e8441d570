package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/daemon"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// loadBinary builds cmd/plexus-load (see testenv.BuildCommand): its
// --serve-tools N is a stdio server with N tools.
func loadBinary(tb testing.TB) string {
	tb.Helper()
	return testenv.BuildCommand(tb, "./cmd/plexus-load")
}

// wideDaemon runs daemon.Run in this process on a fresh home with servers
// s1…sN, each `plexus-load --serve-tools tools`, the face's external calls
// on and the profiles given (JSON members of "profiles"), and returns the
// face's base URL, the token and the home once every server is ready with
// its tools in the catalog.
func wideDaemon(tb testing.TB, servers, tools int, profiles string) (base, token, home string) {
	tb.Helper()
	load := loadBinary(tb)
	home = filepath.Join(tb.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	var srv []string
	for i := 1; i <= servers; i++ {
		srv = append(srv, fmt.Sprintf(`"s%d": {"type": "stdio", "command": %s, "args": ["--serve-tools", "%d"]}`, i, jsonString(load), tools))
	}
	cfg := `{"mcp": {"face": {"allowExternalCall": true}, "profiles": {` + profiles + `}, "servers": {` + strings.Join(srv, ",") + `}}}`
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	base, token = inProcess(tb, home, func(st *apitype.Status) bool {
		ready := len(st.Servers) == servers
		for i := 0; ready && i < servers; i++ {
			ready = st.Servers[i].State == "ready" && st.Servers[i].Tools == tools
		}
		return ready
	})
	return base, token, home
}

// inProcess runs daemon.Run in this process on home until the test ends,
// and returns the face's base URL and the token once ready(status) holds.
func inProcess(tb testing.TB, home string, ready func(*apitype.Status) bool) (base, token string) {
	tb.Helper()
	bin := testenv.Binary(tb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Home: home, Shim: []string{bin, "__plexus-shim"}, Listen: "127.0.0.1:0"})
	}()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			tb.Errorf("daemon: %v", err)
		}
	})
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	slow := "" // where the daemon was starting servers after 20s
	for {
		st, err := client.New(home).Status(ctx)
		if err == nil && ready(st) {
			tok, err := os.ReadFile(filepath.Join(home, "token"))
			if err != nil {
				tb.Fatal(err)
			}
			return "http://" + st.HTTPAddr, strings.TrimSpace(string(tok))
		}
		select {
		case err := <-done:
			tb.Fatalf("daemon exited: %v", err)
		default:
		}
		if slow == "" && time.Since(start) > 20*time.Second {
			slow = "at 20s the daemon was starting servers in:\n" + starting()
		}
		if time.Now().After(deadline) {
			tb.Fatalf("daemon not ready after 60s: %v\n%s%s", err, notReady(home, st), slow)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// notReady says which servers of st are not ready, with what the daemon's
// log says of them.
func notReady(home string, st *apitype.Status) string {
	if st == nil {
		return "no status"
	}
	var b strings.Builder
	logs, _ := os.ReadFile(filepath.Join(home, "logs.jsonl"))
	for _, s := range st.Servers {
		if s.State == apitype.StateReady {
			continue
		}
		fmt.Fprintf(&b, "%s: %s, %d tools, %s\n", s.Name, s.State, s.Tools, s.LastError)
		tag := fmt.Sprintf(`"server":%q`, s.Name)
		for line := range strings.Lines(string(logs)) {
			if strings.Contains(line, tag) {
				b.WriteString("  " + line)
			}
		}
	}
	return b.String()
}

// starting is where the daemon in this process is starting servers: the
// goroutines in a connect or a listing. Taken while a start is slow, it
// shows what the start waits for (a server's start fails only after its
// startup timeout, and its goroutines are gone by then).
func starting() string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var b strings.Builder
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "supervisor.(*Server).connectOnce") || strings.Contains(g, "upstream.(*Conn).refresh") {
			b.WriteString(g + "\n\n")
		}
	}
	return b.String()
}

// rawLister is a client of the face's tools/list with the standard
// library only: MCP 2026-07-28 (no session) or a session of 2025-11-25.
type rawLister struct {
	url, token string
	hc         *http.Client
	session    string       // "" for 2026-07-28; "-" while initializing
	buf        bytes.Buffer // the page read last, kept for the next
}

const rawMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func newRawLister(tb testing.TB, url, token, era string) *rawLister {
	tb.Helper()
	l := &rawLister{url: url, token: token, hc: &http.Client{}}
	if era == "2026-07-28" {
		return l
	}
	l.session = "-" // initialize: no session yet, no version
	resp, b, err := l.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if err != nil || resp.Header.Get("Mcp-Session-Id") == "" {
		tb.Fatalf("initialize: %v %s", err, b)
	}
	l.session = resp.Header.Get("Mcp-Session-Id")
	if _, _, err := l.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", l.session)
		if resp, err := l.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return l
}

func (l *rawLister) post(body string, buf *bytes.Buffer) (*http.Response, []byte, error) {
	req, err := http.NewRequest("POST", l.url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch l.session {
	case "-":
	case "":
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
	default:
		req.Header.Set("Mcp-Session-Id", l.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if buf == nil {
		buf = &bytes.Buffer{}
	}
	buf.Reset()
	_, err = io.Copy(buf, resp.Body)
	return resp, buf.Bytes(), err
}

// listPage is one page as the raw client sees it: its JSON-RPC answer and
// whether it came as plain JSON (the rendered pages) or as an event stream
// (the SDK's handler).
type listPage struct {
	answer []byte
	plain  bool
}

// page asks for the page after cursor.
func (l *rawLister) page(cursor string, buf *bytes.Buffer) (listPage, error) {
	var params []string
	if l.session == "" {
		params = append(params, rawMeta)
	}
	if cursor != "" {
		params = append(params, `"cursor":`+jsonString(cursor))
	}
	resp, b, err := l.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+strings.Join(params, ",")+`}}`, buf)
	if err != nil {
		return listPage{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return listPage{}, fmt.Errorf("tools/list: %s: %.200s", resp.Status, b)
	}
	p := listPage{answer: b, plain: resp.Header.Get("Content-Type") == "application/json"}
	if !p.plain {
		_, data, ok := bytes.Cut(b, []byte("data: "))
		if !ok {
			return p, fmt.Errorf("tools/list: no data in %.200s", b)
		}
		p.answer, _, _ = bytes.Cut(data, []byte("\n"))
	}
	return p, nil
}

// nextCursor finds a page's cursor without decoding its tools: the SDK's
// result puts it before them.
func (p listPage) nextCursor() string {
	head := p.answer[:min(len(p.answer), 4096)]
	_, rest, ok := bytes.Cut(head, []byte(`"nextCursor":"`))
	if !ok {
		return ""
	}
	c, _, _ := bytes.Cut(rest, []byte(`"`))
	return string(c)
}

// all lists every page; each page's answer is decoded only if decode.
func (l *rawLister) all(decode bool) (names []string, pages int, plain bool, err error) {
	cursor, plain := "", true
	for {
		p, err := l.page(cursor, &l.buf)
		if err != nil {
			return nil, pages, false, err
		}
		pages++
		plain = plain && p.plain
		if decode {
			var msg struct {
				Result *mcp.ListToolsResult `json:"result"`
			}
			if err := json.Unmarshal(p.answer, &msg); err != nil || msg.Result == nil {
				return nil, pages, false, fmt.Errorf("page %d: %v: %.200s", pages, err, p.answer)
			}
			for _, t := range msg.Result.Tools {
				names = append(names, t.Name)
			}
		}
		if cursor = p.nextCursor(); cursor == "" {
			return names, pages, plain, nil
		}
	}
}

// TestFaceToolsListPages: a catalog of more than a page is listed whole in
// both eras from the rendered pages, as each profile names it, and the
// list follows the catalog when a server goes.
func TestFaceToolsListPages(t *testing.T) {
	t.Parallel()
	base, token, home := wideDaemon(t, 3, 400, `"bare": {"servers": ["s1"], "naming": "bare"},
		"meta": {"servers": ["s1", "s2"], "metaTools": true}`)
	want := func(names []string, n int, has, hasNot string) error {
		if len(names) != n || !slices.Contains(names, has) || slices.ContainsFunc(names, func(s string) bool { return strings.Contains(s, hasNot) }) {
			return fmt.Errorf("%d tools (want %d), with %s and without %s: %.300v", len(names), n, has, hasNot, names)
		}
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			return errors.New("not sorted once by name")
		}
		return nil
	}
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, tc := range []struct {
			path, has, hasNot string
			n, pages          int
		}{
			{"/mcp", "plexus_status", "nothing", 1202, 2},
			{"/mcp/bare", "tool_399", "s1_", 400, 1}, // the server's tools alone
			{"/mcp/meta", "search_tools", "s1_", 5, 1},
		} {
			names, pages, plain, err := newRawLister(t, base+tc.path, token, era).all(true)
			if err == nil {
				err = want(names, tc.n, tc.has, tc.hasNot)
			}
			if err != nil || pages != tc.pages || !plain {
				t.Errorf("%s %s: %d pages (want %d), all rendered %v: %v", era, tc.path, pages, tc.pages, plain, err)
			}
		}
	}

	// The SDK's client pages through the same list.
	cs := httpFace(t, base+"/mcp", token, nil)
	var sdkNames []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		sdkNames = append(sdkNames, tool.Name)
	}
	raw, _, _, err := newRawLister(t, base+"/mcp", token, "2026-07-28").all(true)
	if err != nil || !slices.Equal(sdkNames, raw) {
		t.Fatalf("the SDK client lists %d tools, the raw one %d (%v)", len(sdkNames), len(raw), err)
	}

	// A server switched off leaves the list.
	if _, err := client.New(home).SetEnabled(t.Context(), "s3", false); err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		l := newRawLister(t, base+"/mcp", token, era)
		deadline := time.Now().Add(30 * time.Second)
		for {
			names, _, plain, err := l.all(true)
			if err == nil && want(names, 802, "plexus_status", "s3_") == nil && plain {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: s3 still listed after 30s: %d tools, rendered %v, %v", era, len(names), plain, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// BenchmarkFaceToolsList5000 is a full tools/list of the 5,000-tool
// catalog (25 servers × 200 tools, and the two control tools) through the
// face of a daemon in this process, every page, by a raw client that reads
// each page whole but decodes only its cursor: a client's time to the whole
// list, most of it the daemon's. With the daemon in-process, -cpuprofile
// shows its list path:
//
//	go test -run '^$' -bench FaceToolsList5000 -cpuprofile cpu.out ./internal/e2e
func BenchmarkFaceToolsList5000(b *testing.B) {
	base, token, _ := wideDaemon(b, 25, 200, "")
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		b.Run(era, func(b *testing.B) {
			l := newRawLister(b, base+"/mcp", token, era)
			names, _, _, err := l.all(true)
			if err != nil || len(names) != 5002 {
				b.Fatalf("%d tools: %v", len(names), err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, pages, _, err := l.all(false); err != nil || pages != 6 {
					b.Fatalf("%d pages: %v", pages, err)
				}
			}
		})
	}
}
