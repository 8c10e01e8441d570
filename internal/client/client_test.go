package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// recorded is one request as the fake daemon saw it.
type recorded struct {
	Method  string
	URI     string // escaped path and query
	IfMatch string
	Body    string
}

// canned is a response of the fake daemon.
type canned struct {
	status int
	body   string
}

// fakeDaemon serves canned answers on a unix socket in a temporary home,
// keyed by "METHOD URI". It tests the client's wire handling only.
type fakeDaemon struct {
	home string
	mu   sync.Mutex
	reqs []recorded
}

func startFake(t *testing.T, routes map[string]canned) *fakeDaemon {
	t.Helper()
	f := &fakeDaemon{home: shortTempDir(t)}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{r.Method, r.URL.RequestURI(), r.Header.Get("If-Match"), string(b)})
		f.mu.Unlock()
		if r.Host != "plexus" {
			http.Error(w, "bad host "+r.Host, http.StatusBadRequest)
			return
		}
		c, ok := routes[r.Method+" "+r.URL.RequestURI()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no route `+r.Method+" "+r.URL.RequestURI()+`"}}`)
			return
		}
		if c.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(c.status)
		_, _ = io.WriteString(w, c.body)
	}))
	l, err := net.Listen("unix", filepath.Join(f.home, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return f
}

func (f *fakeDaemon) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("no request reached the fake daemon")
	}
	return f.reqs[len(f.reqs)-1]
}

// shortTempDir keeps socket paths under the 104-byte limit of sun_path that
// long test names in t.TempDir() could exceed.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pxc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestReads(t *testing.T) {
	f := startFake(t, map[string]canned{
		"GET /v1/status":                          {200, `{"version":"1.0","pid":42,"home":"/h","revision":3,"servers":[{"name":"docs","type":"stdio","enabled":true,"state":"ready","tools":2}]}`},
		"GET /v1/servers":                         {200, `{"revision":3,"servers":[{"name":"docs","state":"failed","lastError":"boom"}]}`},
		"GET /v1/servers/my%20docs%2Fx":           {200, `{"revision":9,"name":"my docs/x","config":{"type":"http","url":"https://x"}}`},
		"GET /v1/tools?server=docs":               {200, `{"tools":[{"name":"mcp_docs_find_ab12","server":"docs","tool":"find","description":"d","inputSchema":{"type":"object"},"kind":"tool"}],"warnings":["w"]}`},
		"GET /v1/tools?format=openai&server=docs": {200, `[{"type":"function"}]`},
		"GET /v1/resources":                       {200, `{"resources":[{"server":"docs","uri":"file:///a","name":"a"}]}`},
		"GET /v1/prompts?server=docs":             {200, `{"prompts":[{"server":"docs","name":"p"}]}`},
		"GET /v1/secrets":                         {200, `{"revision":1,"names":["A","B"]}`},
	})
	c := New(f.home)
	ctx := t.Context()

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != 42 || len(st.Servers) != 1 || st.Servers[0].Tools != 2 {
		t.Errorf("status = %+v", st)
	}
	sl, err := c.Servers(ctx)
	if err != nil || sl.Servers[0].LastError != "boom" {
		t.Errorf("servers = %+v, %v", sl, err)
	}
	sc, err := c.Server(ctx, "my docs/x")
	if err != nil || sc.Revision != 9 || !strings.Contains(string(sc.Config), `"https://x"`) {
		t.Errorf("server = %+v, %v", sc, err)
	}
	tl, err := c.Tools(ctx, "docs")
	if err != nil || len(tl.Tools) != 1 || tl.Tools[0].Tool != "find" || tl.Warnings[0] != "w" {
		t.Errorf("tools = %+v, %v", tl, err)
	}
	raw, err := c.ToolsRendered(ctx, "docs", "openai")
	if err != nil || string(raw) != `[{"type":"function"}]` {
		t.Errorf("rendered = %s, %v", raw, err)
	}
	rl, err := c.Resources(ctx, "")
	if err != nil || rl.Resources[0].URI != "file:///a" {
		t.Errorf("resources = %+v, %v", rl, err)
	}
	pl, err := c.Prompts(ctx, "docs")
	if err != nil || pl.Prompts[0].Name != "p" {
		t.Errorf("prompts = %+v, %v", pl, err)
	}
	sec, err := c.Secrets(ctx)
	if err != nil || strings.Join(sec.Names, ",") != "A,B" {
		t.Errorf("secrets = %+v, %v", sec, err)
	}
}

func TestWrites(t *testing.T) {
	f := startFake(t, map[string]canned{
		"POST /v1/servers":              {201, `{"revision":4,"server":{"name":"docs","state":"ready","tools":3}}`},
		"PUT /v1/servers/docs":          {200, `{"revision":5}`},
		"DELETE /v1/servers/docs":       {204, ``},
		"POST /v1/servers/docs/enable":  {200, `{"revision":6}`},
		"POST /v1/servers/docs/disable": {200, `{"revision":7}`},
		"POST /v1/call":                 {200, `{"result":{"content":[{"type":"text","text":"hi"}]}}`},
		"POST /v1/resources/read":       {200, `{"result":{"contents":[]}}`},
		"POST /v1/prompts/get":          {200, `{"result":{"messages":[]}}`},
		"PUT /v1/secrets/TOKEN":         {204, ``},
		"DELETE /v1/secrets/TOKEN":      {200, `{"revision":2}`},
	})
	c := New(f.home)
	ctx := t.Context()
	cfg := json.RawMessage(`{"type":"stdio","command":"docs-mcp"}`)

	wr, err := c.AddServer(ctx, apitype.PutServerRequest{Name: "docs", Config: cfg}, 0)
	if err != nil || wr.Revision != 4 || wr.Server.Tools != 3 {
		t.Fatalf("add = %+v, %v", wr, err)
	}
	if r := f.last(t); r.IfMatch != "" || r.Body != `{"name":"docs","config":{"type":"stdio","command":"docs-mcp"}}` {
		t.Errorf("add sent %+v", r)
	}
	if _, err := c.PutServer(ctx, "docs", apitype.PutServerRequest{Name: "docs", Config: cfg, NoVerify: true}, 4); err != nil {
		t.Fatal(err)
	}
	if r := f.last(t); r.IfMatch != "4" || !strings.Contains(r.Body, `"noVerify":true`) {
		t.Errorf("put sent %+v", r)
	}
	if wr, err := c.DeleteServer(ctx, "docs", 5); err != nil || wr == nil {
		t.Fatalf("delete = %+v, %v", wr, err)
	}
	if r := f.last(t); r.IfMatch != "5" {
		t.Errorf("delete sent %+v", r)
	}
	if wr, err := c.SetEnabled(ctx, "docs", true); err != nil || wr.Revision != 6 {
		t.Errorf("enable = %+v, %v", wr, err)
	}
	if wr, err := c.SetEnabled(ctx, "docs", false); err != nil || wr.Revision != 7 {
		t.Errorf("disable = %+v, %v", wr, err)
	}
	cr, err := c.Call(ctx, apitype.CallRequest{Name: "mcp_docs_find_ab12", Arguments: json.RawMessage(`{"q":1}`)})
	if err != nil || !strings.Contains(string(cr.Result), `"hi"`) {
		t.Errorf("call = %+v, %v", cr, err)
	}
	if r := f.last(t); r.Body != `{"name":"mcp_docs_find_ab12","arguments":{"q":1}}` {
		t.Errorf("call sent %s", r.Body)
	}
	if _, err := c.ReadResource(ctx, apitype.ReadResourceRequest{Server: "docs", URI: "file:///a"}); err != nil {
		t.Error(err)
	}
	if _, err := c.GetPrompt(ctx, apitype.GetPromptRequest{Server: "docs", Name: "p", Arguments: map[string]string{"k": "v"}}); err != nil {
		t.Error(err)
	}
	if r := f.last(t); r.Body != `{"server":"docs","name":"p","arguments":{"k":"v"}}` {
		t.Errorf("get prompt sent %s", r.Body)
	}
	if err := c.SetSecret(ctx, "TOKEN", "s3cret"); err != nil {
		t.Fatal(err)
	}
	if r := f.last(t); r.Body != `{"value":"s3cret"}` {
		t.Errorf("set secret sent %s", r.Body)
	}
	if err := c.DeleteSecret(ctx, "TOKEN"); err != nil {
		t.Fatal(err)
	}
}

func TestAPIError(t *testing.T) {
	f := startFake(t, map[string]canned{
		"PUT /v1/servers/docs": {400, `{"error":{"code":"bad_request","message":"invalid server config","hint":"fix it","problems":[{"path":"mcp.servers.docs.url","message":"must be https"},{"path":"mcp.servers.docs.type","message":"unknown type"}]}}`},
		"GET /v1/status":       {500, "oops\nmore"},
		"POST /v1/servers":     {409, `{"error":{"code":"conflict","message":"stale","revision":8}}`},
	})
	c := New(f.home)
	_, err := c.PutServer(t.Context(), "docs", apitype.PutServerRequest{Name: "docs"}, 3)
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v", err, err)
	}
	want := "invalid server config\n  mcp.servers.docs.url: must be https\n  mcp.servers.docs.type: unknown type"
	if ae.Status != 400 || ae.Body.Hint != "fix it" || err.Error() != want {
		t.Errorf("got %d %q, want %q", ae.Status, err.Error(), want)
	}

	_, err = c.Status(t.Context())
	if !errors.As(err, &ae) || ae.Status != 500 || ae.Body.Code != apitype.CodeInternal || !strings.Contains(err.Error(), "oops") || strings.Contains(err.Error(), "more") {
		t.Errorf("non-JSON error = %v", err)
	}

	_, err = c.AddServer(t.Context(), apitype.PutServerRequest{Name: "docs"}, 0)
	if !errors.As(err, &ae) || ae.Body.Revision != 8 || ae.Body.Code != apitype.CodeConflict {
		t.Errorf("conflict = %v", err)
	}
}

func TestDaemonNotRunning(t *testing.T) {
	home := shortTempDir(t)

	t.Run("no socket", func(t *testing.T) {
		t.Setenv("PLEXUS_HOME", "")
		_, err := New(home).Status(t.Context())
		if !errors.Is(err, ErrDaemonNotRunning) || !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("err = %v", err)
		}
		if got, want := err.Error(), "the daemon is not running: start it with `plexus daemon`"; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	})

	t.Run("PLEXUS_HOME named", func(t *testing.T) {
		t.Setenv("PLEXUS_HOME", home)
		_, err := New(home).Servers(t.Context())
		if !errors.Is(err, ErrDaemonNotRunning) || !strings.Contains(err.Error(), "PLEXUS_HOME") || !strings.Contains(err.Error(), home) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("stale socket", func(t *testing.T) {
		t.Setenv("PLEXUS_HOME", "")
		l, err := net.Listen("unix", filepath.Join(home, SocketName))
		if err != nil {
			t.Fatal(err)
		}
		// A daemon that died leaves its socket file behind.
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		_, err = New(home).Status(t.Context())
		if !errors.Is(err, ErrDaemonNotRunning) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestDialFailureMessages(t *testing.T) {
	c := New("/nowhere")
	perm := &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}
	err := c.dialFailure(perm)
	if errors.Is(err, ErrDaemonNotRunning) || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "PLEXUS_HOME") {
		t.Errorf("permission: %v", err)
	}
	other := c.dialFailure(errors.New("weird"))
	if errors.Is(other, ErrDaemonNotRunning) || !strings.Contains(other.Error(), "/nowhere/plexus.sock") {
		t.Errorf("other: %v", other)
	}
}

func TestContextCanceled(t *testing.T) {
	f := startFake(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := New(f.home).Status(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrDaemonNotRunning) {
		t.Errorf("err = %v", err)
	}
}

func TestHome(t *testing.T) {
	t.Setenv("PLEXUS_HOME", "/srv/px")
	if h, err := Home(); err != nil || h != "/srv/px" {
		t.Errorf("Home() = %q, %v", h, err)
	}
	t.Setenv("PLEXUS_HOME", "")
	t.Setenv("HOME", "/home/u")
	if h, err := Home(); err != nil || h != "/home/u/.plexus" {
		t.Errorf("Home() = %q, %v", h, err)
	}
}
