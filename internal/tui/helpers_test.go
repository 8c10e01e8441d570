package tui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// waitFor is the generous deadline of every wait: the machine is shared and
// a daemon starts servers meanwhile.
const waitFor = 60 * time.Second

// recorder wraps the real model and keeps every frame it draws, so that a
// test can wait on the screen and check that a secret never reached it.
type recorder struct {
	m      *Model
	mu     *sync.Mutex
	frames *[]string
}

func (r recorder) Init() tea.Cmd { return r.m.Init() }

func (r recorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := r.m.Update(msg)
	return r, cmd
}

func (r recorder) View() tea.View {
	v := r.m.View()
	r.mu.Lock()
	*r.frames = append(*r.frames, plain(v.Content))
	r.mu.Unlock()
	return v
}

// ui is the model running in the test harness against a real daemon.
type ui struct {
	t   *testing.T
	tm  *teatest.TestModel
	rec recorder
	env *testenv.Env
	c   *client.Client
}

// startDaemon starts a daemon on a temporary home.
func startDaemon(t *testing.T) *testenv.Env {
	t.Helper()
	e := testenv.New(t)
	e.StartDaemon()
	return e
}

// startUI runs the real model at 80x24 against e's daemon.
func startUI(t *testing.T, e *testenv.Env) *ui {
	t.Helper()
	c := client.New(e.Home)
	m := New(context.Background(), c)
	rec := recorder{m: m, mu: &sync.Mutex{}, frames: &[]string{}}
	tm := teatest.NewTestModel(t, rec, teatest.WithInitialTermSize(80, 24))
	t.Cleanup(func() {
		tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		m.Close()
	})
	u := &ui{t: t, tm: tm, rec: rec, env: e, c: c}
	u.waitScreen("connected", func(s string) bool { return !strings.Contains(s, "connecting to the daemon") })
	return u
}

// screen returns the last frame drawn.
func (u *ui) screen() string {
	u.rec.mu.Lock()
	defer u.rec.mu.Unlock()
	f := *u.rec.frames
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// frames returns every frame drawn so far.
func (u *ui) frames() []string {
	u.rec.mu.Lock()
	defer u.rec.mu.Unlock()
	return append([]string(nil), *u.rec.frames...)
}

// waitScreen waits until the screen satisfies ok.
func (u *ui) waitScreen(what string, ok func(string) bool) string {
	u.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := u.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("waiting for %s: the screen is\n%s\n%s", what, s, u.daemonSide())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonSide is what the daemon itself says when the screen is not what a
// test waits for — its status of the servers and its log — so that a
// failure tells a screen that missed a change from a daemon that did not
// make it.
func (u *ui) daemonSide() string {
	if u.env == nil {
		return ""
	}
	r := u.env.Run("", "ls", "--json")
	return fmt.Sprintf("the daemon's status:\n%s%s\nthe daemon's log:\n%s", r.Stdout, r.Stderr, u.env.DaemonOutput())
}

// waitFrame waits until some frame drawn so far satisfies ok: for a state
// that may pass quickly.
func (u *ui) waitFrame(what string, ok func(string) bool) {
	u.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !slices.ContainsFunc(u.frames(), ok) {
		if time.Now().After(deadline) {
			u.t.Fatalf("waiting for %s: the screen is\n%s\n%s", what, u.screen(), u.daemonSide())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitText waits until the screen shows every one of texts.
func (u *ui) waitText(texts ...string) string {
	u.t.Helper()
	return u.waitScreen(strings.Join(texts, " and "), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// namedKeys are the keys press sends by name.
var namedKeys = map[string]tea.KeyPressMsg{
	"enter":  {Code: tea.KeyEnter},
	"tab":    {Code: tea.KeyTab},
	"ctrl+s": {Code: 's', Mod: tea.ModCtrl},
	"esc":    {Code: tea.KeyEscape},
	"left":   {Code: tea.KeyLeft},
	"right":  {Code: tea.KeyRight},
	"up":     {Code: tea.KeyUp},
	"down":   {Code: tea.KeyDown},
	"space":  {Code: tea.KeySpace, Text: " "},
}

// press sends keys by name (namedKeys); anything else is typed as text.
func (u *ui) press(keys ...string) {
	for _, k := range keys {
		if msg, ok := namedKeys[k]; ok {
			u.tm.Send(msg)
			continue
		}
		u.tm.Type(k)
	}
}

// noCanary fails if any frame drawn so far shows a secret.
func (u *ui) noCanary(secrets ...string) {
	u.t.Helper()
	frames := u.frames()
	if len(frames) == 0 {
		u.t.Fatal("no frame was drawn")
	}
	for i, f := range frames {
		for _, s := range secrets {
			if strings.Contains(f, s) {
				u.t.Fatalf("frame %d of %d shows the secret %q:\n%s", i, len(frames), s, f)
			}
		}
	}
}

// files returns extensions.json and creds.json as they are on disk.
func files(t *testing.T, home string) (ext, creds string) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(home, "extensions.json"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, "creds.json"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(a), string(b)
}

// httpServer is a real MCP server over streamable HTTP on 127.0.0.1. A
// request with a bearer token must carry token; one without is let in when
// open is set (so that removing the token can be saved).
type httpServer struct {
	URL  string
	mu   sync.Mutex
	auth []string // Authorization headers seen
	keys []string // X-Api-Key headers seen
}

func startHTTPServer(t *testing.T, token string, open bool) *httpServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "tui-test-http", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", Description: "answers pong"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := &httpServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		hs.mu.Lock()
		hs.auth = append(hs.auth, got)
		hs.keys = append(hs.keys, r.Header.Get("X-Api-Key"))
		hs.mu.Unlock()
		if got != "Bearer "+token && !(open && got == "") {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})) // 127.0.0.1 only
	t.Cleanup(srv.Close)
	hs.URL = srv.URL + "/mcp"
	return hs
}

// saw reports whether the server received header values equal to v.
func (h *httpServer) saw(auth, key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	okA, okK := auth == "", key == ""
	for _, a := range h.auth {
		okA = okA || a == auth
	}
	for _, k := range h.keys {
		okK = okK || k == key
	}
	return okA && okK
}
