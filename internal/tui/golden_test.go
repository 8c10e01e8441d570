package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// updating reports -update: rewrite the golden screens in testdata. The
// flag is teatest's (its golden package defines it); both mean the same.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares a screen with testdata/name.golden, after checking that it
// fits the terminal: exactly h lines of at most w columns.
func golden(t *testing.T, name, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("%s: %d lines, want %d", name, len(lines), h)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Errorf("%s: line %d is %d columns wide: %q", name, i+1, ansi.StringWidth(l), l)
		}
	}
	got := goldenText(screen)
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// goldenText is a screen as its golden file keeps it: trailing blanks are
// the terminal's, and the file keeps them out.
func goldenText(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// isGolden reports whether screen is testdata/name.golden as golden
// compares them.
func isGolden(name, screen string) bool {
	want, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
	return err == nil && goldenText(screen) == string(want)
}

// untilGolden is how a test of a live screen waits before golden compares
// it: a screen is drawn from several answers and events of the daemon
// (the list, the settings, a server's own events, its stderr), and any of
// them may come after the texts a test waited for. It calls next — the
// screen as it is now — until the screen is the whole golden one or the
// deadline passes, and returns the last screen for golden to compare (and
// to show whole when it still differs). With -update it returns first
// at once: that screen is the new golden one.
func untilGolden(name string, first string, next func() string) string {
	s := first
	for deadline := time.Now().Add(waitFor); !updating() && !isGolden(name, s) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		s = next()
	}
	return s
}

// fixtureModel is the model as the daemon's answers leave it, for screens
// that must not depend on times, paths or process ids.
// eventSeq numbers the events the tests send as the daemon would.
var eventSeq atomic.Int64

// serverEvent is a server event as the daemon sends it: numbered after
// every event before it, with a status as new as itself.
func serverEvent(s apitype.ServerStatus) eventMsg {
	seq := eventSeq.Add(1)
	s.EventSeq = seq
	return eventMsg{ev: apitype.Event{Seq: seq, Type: apitype.EventServer, Server: s.Name, Status: &s}}
}

func fixtureModel(t *testing.T) *Model {
	m := New(context.Background(), client.New(t.TempDir()))
	t.Cleanup(m.Close)
	one := 1
	m.connected = true
	m.setServers([]apitype.ServerStatus{
		{Name: "filesystem", Type: "stdio", Enabled: true, State: apitype.StateReady, Tools: 11,
			Command:    []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/my docs"},
			ServerInfo: "secure-filesystem-server 0.2.0", EnvNames: []string{"DEBUG"},
			Stderr: []string{"Secure MCP Filesystem Server running on stdio", "Allowed directories: [ '/srv/my docs' ]"}},
		{Name: "search", Type: "http", Enabled: true, State: apitype.StateFailed,
			URL: "https://mcp.example.com/mcp?key=REDACTED", HeaderNames: []string{"X-Api-Key"},
			LastError: `server "search": connect: HTTP 401 Unauthorized: invalid API key`, HTTPStatus: 401},
		{Name: "github", Type: "stdio", Enabled: true, State: apitype.StateBackoff, ExitCode: &one,
			Command: []string{"github-mcp-server", "stdio"}, LastError: "exited with code 1: missing GITHUB_TOKEN"},
		{Name: "docs", Type: "stdio", Enabled: false, State: apitype.StateDisabled, Command: []string{"/usr/local/bin/docs-mcp"}},
		{Name: "agentadded", Type: "stdio", Enabled: true, State: apitype.StateStopped, NeedsApproval: true,
			Approval: &apitype.Approval{Reason: "added by an agent", Current: apitype.ServerDefinition{Type: "stdio", Command: []string{"uvx", "mcp-server-time"}}}},
		{Name: "linear", Type: "http", Enabled: true, State: apitype.StateFailed, URL: "https://mcp.linear.app/mcp",
			Auth: &apitype.AuthStatus{NeedsLogin: true}, LastError: "HTTP 401: authorization required"},
	})
	m.selectName("filesystem")
	m.tools["filesystem"] = []string{"create_directory", "directory_tree", "edit_file", "get_file_info", "list_allowed_directories",
		"list_directory", "move_file", "read_multiple_files", "read_text_file", "search_files", "write_file"}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m
}

func typeInto(m *Model, keys ...tea.Msg) {
	for _, k := range keys {
		m.Update(k)
	}
}

func runes(s string) tea.KeyPressMsg {
	r, _ := utf8.DecodeRuneInString(s)
	return tea.KeyPressMsg{Code: r, Text: s}
}

// TestGoldenScreens: the list with every state, the form, and help, at
// 80x24 without colour.
func TestGoldenScreens(t *testing.T) {
	m := fixtureModel(t)
	golden(t, "list", plain(m.frame()), 80, 24)
	typeInto(m, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyDown})
	golden(t, "list-error", plain(m.frame()), 80, 24) // search: failed, its error in full
	typeInto(m, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyUp})

	typeInto(m, runes("n"), runes("https://mcp.example.com/mcp"), tea.KeyPressMsg{Code: tea.KeyTab}, tea.KeyPressMsg{Code: tea.KeyTab},
		runes("canary-golden-token"), tea.KeyPressMsg{Code: tea.KeyTab}, runes("X-Api-Key"))
	golden(t, "form", plain(m.frame()), 80, 24)
	if strings.Contains(plain(m.frame()), "canary-golden-token") {
		t.Fatal("the form shows the token")
	}

	typeInto(m, tea.KeyPressMsg{Code: tea.KeyEscape}, runes("?"))
	golden(t, "help", plain(m.frame()), 80, 24)

	// Wider windows give the last error its room.
	typeInto(m, runes("x"), tea.WindowSizeMsg{Width: 120, Height: 30})
	golden(t, "list-120x30", plain(m.frame()), 120, 30)
}

// TestGoldenErrorState: the form after the daemon refused a server that
// cannot start, with the daemon's own error.
func TestGoldenErrorState(t *testing.T) {
	u := startUI(t, startDaemon(t))
	u.press("n", "right", "/nonexistent/mcp-server", "tab", "tab", "TOKEN=canary-golden-env", "ctrl+s")
	// The server the add showed while it tried goes away by an event of its
	// own, which may come after the daemon's answer.
	s := u.waitText("Nothing was saved", "0 servers")
	golden(t, "form-error", untilGolden("form-error", s, u.screen), 80, 24)
	u.noCanary("canary-golden-env")
}

// TestLoginScreen: the login follows the contract of the OAuth routes: the
// URL to open from LoginStart, then progress from the server's Auth field
// as server events bring it (R-UI-4: OAuth waiting for the browser).
func TestLoginScreen(t *testing.T) {
	const linkURL = "https://auth.linear.app/authorize?client_id=plexus-4f2a&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&redirect_uri=http%3A%2F%2F127.0.0.1%3A7781%2Fcallback&state=af0ifjsldkj"
	m := fixtureModel(t)
	m.selectName("linear")
	m.Update(loginMsg{server: "linear", start: &apitype.LoginStart{Server: "linear",
		AuthURL:     linkURL,
		RedirectURI: "http://127.0.0.1:7781/callback"}})
	linear, _ := m.server("linear")
	status := func(a apitype.AuthStatus, state string) eventMsg {
		s := linear
		s.Auth, s.State = &a, state
		if state == apitype.StateReady {
			s.Tools, s.LastError = 23, ""
		}
		return serverEvent(s)
	}
	m.Update(status(apitype.AuthStatus{NeedsLogin: true, Login: "waiting"}, apitype.StateFailed))
	golden(t, "login", plain(m.frame()), 80, 24)
	// The URL is whole on the screen, and every line of it links to the
	// whole of it (OSC 8), to open or copy.
	link := ansi.SetHyperlink(linkURL, "id=plexus-login")
	if v := plain(m.frame()); strings.Count(v, link) < 2 || !strings.Contains(strings.ReplaceAll(ansi.Strip(v), "\n", ""), linkURL) {
		t.Fatalf("the login URL is not one whole link:\n%q", v)
	}
	if !strings.Contains(plain(m.frame()), "waiting for the browser") {
		t.Fatal("no progress while the daemon waits for the browser")
	}
	// ctrl+y puts the whole URL on the clipboard (OSC 52), without the
	// line breaks its wrapping on screen would carry into a copy.
	if cmd := m.loginKey(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl}); cmd == nil || fmt.Sprint(cmd()) != linkURL {
		t.Fatalf("ctrl+y did not copy the URL whole")
	}
	// A pasted redirect carries the authorization code: never drawn.
	m.Update(runes("http://127.0.0.1:7781/callback?code=canary-auth-code-77&state=af0ifjsldkj"))
	if v := plain(m.frame()); strings.Contains(v, "canary-auth-code-77") || !strings.Contains(v, "> •••") {
		t.Fatalf("the pasted redirect is shown:\n%s", v)
	}
	if cmd := m.loginKey(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd == nil || !strings.Contains(plain(m.frame()), "completing the login of linear") {
		t.Fatalf("enter did not send the pasted redirect:\n%s", plain(m.frame()))
	}
	m.busy = "" // the answer is the daemon's; this test has none
	m.Update(status(apitype.AuthStatus{NeedsLogin: true, Login: "failed", LoginError: "access_denied"}, apitype.StateFailed))
	if !strings.Contains(plain(m.frame()), "login failed: access_denied") {
		t.Fatalf("a failed login is not shown:\n%s", plain(m.frame()))
	}
	m.Update(status(apitype.AuthStatus{LoggedIn: true, Issuer: "https://auth.linear.app"}, apitype.StateReady))
	if !strings.Contains(plain(m.frame()), "● logged in · linear is ready, 23 tools") {
		t.Fatalf("the end of the login is not shown:\n%s", plain(m.frame()))
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if v := plain(m.frame()); !strings.Contains(v, "logged in at https://auth.linear.app") || !strings.Contains(v, "● ready") {
		t.Fatalf("the list does not show the login:\n%s", v)
	}
}

// TestManyServersScroll: a long list scrolls to keep the selection in view
// and the screen at 24 lines.
func TestManyServersScroll(t *testing.T) {
	m := fixtureModel(t)
	var list []apitype.ServerStatus
	for i := range 30 {
		list = append(list, apitype.ServerStatus{Name: fmt.Sprintf("s%02d", i), Type: "stdio", Enabled: true, State: apitype.StateReady})
	}
	m.setServers(list)
	for range 40 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	v := plain(m.frame())
	if !strings.Contains(v, "› s29") || strings.Contains(v, "s00") || len(strings.Split(v, "\n")) != 24 {
		t.Fatalf("at the end of the list:\n%s", v)
	}
	for range 40 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	}
	if v := plain(m.frame()); !strings.Contains(v, "› s00") || strings.Contains(v, "s29") {
		t.Fatalf("back at the top:\n%s", v)
	}
}

// TestConnectingShowsProgress: servers being started show as progress in
// the title (R-UI-4), with the spinner running only then.
func TestConnectingShowsProgress(t *testing.T) {
	m := fixtureModel(t)
	if strings.Contains(plain(m.frame()), "connecting") || m.needsSpinner() {
		t.Fatal("progress shown with nothing starting")
	}
	s, _ := m.server("docs")
	s.Enabled, s.State = true, apitype.StateStarting
	m.Update(serverEvent(s))
	if !strings.Contains(plain(m.frame()), "connecting 1 · 6 servers · 1 ready") || !m.needsSpinner() || !m.spinning {
		t.Fatalf("no progress while a server starts:\n%s", plain(m.frame()))
	}
}
