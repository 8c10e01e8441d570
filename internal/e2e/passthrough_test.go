package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// npmServer is a popular MCP server from the npm registry, run over stdio.
type npmServer struct {
	name string
	argv []string
}

// passthroughServers are the servers whose tools/list a bare profile must
// give as the server does, pinned in testenv/npm and
// e2e/testdata/passthrough.
func passthroughServers(t *testing.T) []npmServer {
	t.Helper()
	modules := testenv.NPMInstall(t, filepath.Join(testenv.RepoRoot(), "internal", "e2e", "testdata", "passthrough"), "passthrough")
	bin := func(name string) string { return filepath.Join(modules, ".bin", name) }
	return []npmServer{
		{"everything", []string{testenv.NPMBin(t, "mcp-server-everything")}},
		{"filesystem", []string{testenv.NPMBin(t, "mcp-server-filesystem"), t.TempDir()}},
		{"memory", []string{testenv.NPMBin(t, "mcp-server-memory")}},
		{"thinking", []string{bin("mcp-server-sequential-thinking")}},
		{"context7", []string{bin("context7-mcp")}},
		{"apps", []string{bin("mcp-server-basic-vanillajs"), "--stdio"}},
	}
}

// stdioPeer is a client of one stdio server with the standard library
// only, which keeps every answer's result as the bytes the server wrote.
type stdioPeer struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startStdioPeer(t *testing.T, argv []string) *stdioPeer {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	// The capabilities Plexus declares to servers (upstream's
	// clientHandlers): a server may offer tools by them
	// (server-everything lists its elicitation and sampling tools only
	// to a client that can answer them).
	p.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}},"sampling":{}},"clientInfo":{"name":"direct","version":"1"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// call sends a request and returns its result as written.
func (p *stdioPeer) call(method, params string) json.RawMessage {
	p.t.Helper()
	p.id++
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, p.id, method, params))
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || string(m.ID) != fmt.Sprint(p.id) {
			continue // a notification, a log line
		}
		if m.Error != nil {
			p.t.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
	p.t.Fatalf("%s: no answer", method)
	return nil
}

// listTools lists every page of a tools/list result source.
func listTools(t *testing.T, page func(cursor string) json.RawMessage) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	cursor := ""
	for range 100 {
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		b := page(cursor)
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("tools/list result %.300s: %v", b, err)
		}
		all = append(all, res.Tools...)
		if cursor = res.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}

// facePeer is a client of one profile of the HTTP face with the standard
// library only, in the session era (2025-11-25) or MCP 2026-07-28.
type facePeer struct {
	t            *testing.T
	url, token   string
	era, session string
	hc           *http.Client
	id           int
}

const eraMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func newFacePeer(t *testing.T, url, token, era string) *facePeer {
	t.Helper()
	p := &facePeer{t: t, url: url, token: token, era: era, hc: &http.Client{}}
	if era == "2026-07-28" {
		if p.discovered() {
			return p
		}
		// Refused, as a bare profile of a session-era server refuses the
		// era: the client falls back to initialize, as the SDKs' do.
		p.era = "2025-11-25"
	}
	resp, _ := p.post("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`, true)
	p.session = resp.Header.Get("Mcp-Session-Id")
	if p.session == "" {
		t.Fatal("initialize: no session")
	}
	p.post("notifications/initialized", "", false)
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", p.session)
		if resp, err := p.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return p
}

// discovered reports whether the profile answers a 2026-07-28
// server/discover (a client of that era probes with it first).
func (p *facePeer) discovered() bool {
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":`+eraMeta+`}}`))
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := p.hc.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// post sends one message and returns the HTTP answer and, for a call,
// its result as written (from a JSON answer or an event stream).
func (p *facePeer) post(method, params string, call bool) (*http.Response, json.RawMessage) {
	p.t.Helper()
	if p.era == "2026-07-28" {
		if params == "" || params == "{}" {
			params = `{"_meta":` + eraMeta + `}`
		} else {
			params = `{"_meta":` + eraMeta + "," + strings.TrimPrefix(params, "{")
		}
	}
	var body string
	if call {
		p.id++
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, p.id, method, params)
	} else {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
	}
	req, err := http.NewRequest("POST", p.url, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case p.era == "2026-07-28":
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		var named struct{ Name, URI string }
		if json.Unmarshal([]byte(params), &named) == nil && named.Name+named.URI != "" {
			req.Header.Set("Mcp-Name", named.Name+named.URI)
		}
	case p.session != "":
		req.Header.Set("Mcp-Session-Id", p.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode >= 300 {
		p.t.Fatalf("%s: %s %v: %.300s", method, resp.Status, err, b)
	}
	if !call {
		return resp, nil
	}
	for _, chunk := range bytes.Split(b, []byte("\n")) {
		chunk = bytes.TrimPrefix(chunk, []byte("data: "))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(chunk, &m) != nil || string(m.ID) != fmt.Sprint(p.id) {
			continue
		}
		if m.Error != nil {
			p.t.Fatalf("%s: %s", method, m.Error)
		}
		return resp, m.Result
	}
	p.t.Fatalf("%s: no answer in %.300s", method, b)
	return resp, nil
}

func (p *facePeer) call(method, params string) json.RawMessage {
	p.t.Helper()
	_, res := p.post(method, params, true)
	return res
}

// cursorParams are a list request's params for cursor.
func cursorParams(cursor string) string {
	if cursor == "" {
		return "{}"
	}
	return `{"cursor":` + jsonString(cursor) + `}`
}

// sameJSON says how a and b differ as JSON, key order aside; "" if not.
func sameJSON(a, b json.RawMessage) string {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err.Error()
	}
	if reflect.DeepEqual(x, y) {
		return ""
	}
	return fmt.Sprintf("\n  direct:  %.600s\n  plexus:  %.600s", a, b)
}

// passthroughDaemon runs a daemon with every server of servers, a bare
// profile for each (named as the server) and the profiles extra (JSON
// members of "profiles"), and returns the face's base URL and token once
// they are all ready.
func passthroughDaemon(t *testing.T, servers []npmServer, extra string) (base, token string) {
	t.Helper()
	e := testenv.New(t)
	var srv, prof []string
	for _, s := range servers {
		args, _ := json.Marshal(s.argv[1:])
		srv = append(srv, fmt.Sprintf(`%q: {"type": "stdio", "command": %s, "args": %s, "startupTimeoutMs": 120000}`, s.name, jsonString(s.argv[0]), args))
		prof = append(prof, fmt.Sprintf(`%q: {"servers": [%q], "naming": "bare"}`, s.name, s.name))
	}
	if extra != "" {
		prof = append(prof, extra)
	}
	cfg := `{"mcp": {"face": {"allowExternalCall": true}, "profiles": {` + strings.Join(prof, ",") + `}, "servers": {` + strings.Join(srv, ",") + `}}}`
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	for _, s := range servers {
		waitState(t, e, s.name, "ready", 120*time.Second)
	}
	st, err := client.New(e.Home).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(e.Home, "token"))
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + st.HTTPAddr, strings.TrimSpace(string(tok))
}

// TestBareToolsListIsTheServers: through a bare profile, tools/list is
// the server's own — every tool, in the server's order, each definition
// equal to what the server wrote (key order aside), _meta, annotations,
// execution and white space included — for six popular servers from npm,
// in both client eras.
func TestBareToolsListIsTheServers(t *testing.T) {
	t.Parallel()
	servers := passthroughServers(t)
	if testing.Short() {
		// The race run: two servers (one an MCP Apps server) exercise
		// the same code as six.
		servers = slices.DeleteFunc(servers, func(s npmServer) bool { return s.name != "everything" && s.name != "apps" })
	}
	direct := make([][]json.RawMessage, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			p := startStdioPeer(t, s.argv)
			direct[i] = listTools(t, func(c string) json.RawMessage { return p.call("tools/list", cursorParams(c)) })
		})
	}
	wg.Wait()
	base, token := passthroughDaemon(t, servers, "")

	total := 0
	for i, s := range servers {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(s.name+"@"+era, func(t *testing.T) {
				p := newFacePeer(t, base+"/mcp/"+s.name, token, era)
				got := listTools(t, func(c string) json.RawMessage { return p.call("tools/list", cursorParams(c)) })
				if len(got) != len(direct[i]) {
					t.Fatalf("%d tools through Plexus, %d directly", len(got), len(direct[i]))
				}
				equal := 0
				for j := range got {
					if diff := sameJSON(direct[i][j], got[j]); diff != "" {
						t.Errorf("tool %d differs:%s", j, diff)
						continue
					}
					equal++
				}
				t.Logf("%d of %d tools equal", equal, len(got))
			})
		}
		total += len(direct[i])
	}
	t.Logf("%d tools of %d servers compared", total, len(servers))
}

// TestMCPAppsViewThroughPlexus: an MCP Apps server's tool names its view
// (_meta.ui.resourceUri, a ui:// resource) and the view opens through
// Plexus as directly: through a bare profile under the server's own URI,
// and through a profile that gathers servers under a URI of the
// profile's, which the tool's _meta and resources/list name alike.
func TestMCPAppsViewThroughPlexus(t *testing.T) {
	t.Parallel()
	var apps npmServer
	for _, s := range passthroughServers(t) {
		if s.name == "apps" {
			apps = s
		}
	}
	p := startStdioPeer(t, apps.argv)
	tools := listTools(t, func(c string) json.RawMessage { return p.call("tools/list", cursorParams(c)) })
	var view string
	for _, tool := range tools {
		if v := catalog.UIResourceURIs(tool); len(v) > 0 {
			view = v[0]
		}
	}
	if view == "" {
		t.Fatalf("the MCP Apps server names no view: %s", tools)
	}
	directRead := p.call("resources/read", `{"uri":`+jsonString(view)+`}`)
	var want struct {
		Contents []struct {
			URI, MIMEType, Text string
		}
	}
	if err := json.Unmarshal(directRead, &want); err != nil || len(want.Contents) != 1 || !strings.Contains(want.Contents[0].Text, "<") {
		t.Fatalf("the view read directly: %s, %v", directRead, err)
	}

	base, token := passthroughDaemon(t, []npmServer{apps}, `"all": {"servers": ["apps"]}`)
	// The server speaks the session era only, and so does its bare profile:
	// a 2026-07-28 client falls back to it (TestBareProfileSpeaksItsServersEra).
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("bare@"+era, func(t *testing.T) {
			fp := newFacePeer(t, base+"/mcp/apps", token, era)
			listed := listTools(t, func(c string) json.RawMessage { return fp.call("tools/list", cursorParams(c)) })
			var named []string
			for _, tool := range listed {
				named = append(named, catalog.UIResourceURIs(tool)...)
			}
			if len(named) != 1 || named[0] != view {
				t.Fatalf("views named through the bare profile: %q, want %s", named, view)
			}
			got := fp.call("resources/read", `{"uri":`+jsonString(view)+`}`)
			checkView(t, got, view, want.Contents[0].MIMEType, want.Contents[0].Text)
		})
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("gathering@"+era, func(t *testing.T) {
			fp := newFacePeer(t, base+"/mcp/all", token, era)
			listed := listTools(t, func(c string) json.RawMessage { return fp.call("tools/list", cursorParams(c)) })
			var named []string
			for _, tool := range listed {
				named = append(named, catalog.UIResourceURIs(tool)...)
			}
			renamed := catalog.UIURI("apps", view)
			if len(named) != 1 || named[0] != renamed {
				t.Fatalf("views named through the gathering profile: %q, want %s", named, renamed)
			}
			var res struct {
				Resources []struct{ URI string }
			}
			json.Unmarshal(fp.call("resources/list", "{}"), &res)
			found := false
			for _, r := range res.Resources {
				found = found || r.URI == renamed
			}
			if !found {
				t.Errorf("resources/list does not offer the view as %s: %+v", renamed, res.Resources)
			}
			got := fp.call("resources/read", `{"uri":`+jsonString(renamed)+`}`)
			checkView(t, got, renamed, want.Contents[0].MIMEType, want.Contents[0].Text)
		})
	}
}

// checkView checks a resources/read result of a view.
func checkView(t *testing.T, got json.RawMessage, uri, mime, text string) {
	t.Helper()
	var res struct {
		Contents []struct {
			URI, MIMEType, Text string
		}
	}
	if err := json.Unmarshal(got, &res); err != nil || len(res.Contents) != 1 {
		t.Fatalf("the view read through Plexus: %.300s, %v", got, err)
	}
	c := res.Contents[0]
	if c.URI != uri || c.MIMEType != mime || c.Text != text {
		t.Errorf("the view read through Plexus: uri %s, type %s, %d bytes of text; want %s, %s, the server's %d bytes", c.URI, c.MIMEType, len(c.Text), uri, mime, len(text))
	}
}
