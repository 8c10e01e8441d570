package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// connectFace runs `plexus mcp` as an editor would and connects to it.
func connectFace(t *testing.T, e *testenv.Env) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(e.Bin, "mcp")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, testenv.Transport(t, cmd), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestMCPFaceGates: `plexus mcp` always offers the control-plane tools; the
// servers' tools only with mcp.face.allowExternalCall on.
func TestMCPFaceGates(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name

	cs := connectFace(t, e)
	names := toolNames(t, cs)
	if !slices.Contains(names, "plexus_status") || !slices.Contains(names, "plexus_snapshot") || slices.Contains(names, echo) ||
		slices.Contains(names, "plexus_add_server") || slices.Contains(names, "plexus_restart") {
		t.Fatalf("with the gates off: %v", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plexus_status"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"example"`) {
		t.Fatalf("plexus_status: %+v %v", res, err)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "x"}}); err == nil && !res.IsError {
		t.Fatal("an upstream tool was callable with the gate off")
	}
	cs.Close()

	// Switch the gate on by hand and reload.
	p := filepath.Join(e.Home, "extensions.json")
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"mcp": {`, `"mcp": {"face": {"allowExternalCall": true},`, 1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")
	cs = connectFace(t, e)
	if names := toolNames(t, cs); !slices.Contains(names, echo) {
		t.Fatalf("with the gate on: %v", names)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "through the face"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "through the face" {
		t.Fatalf("echo through the face: %+v %v", res, err)
	}
}

// TestMCPFaceStartsDaemon: `plexus mcp` with no daemon running starts one.
func TestMCPFaceStartsDaemon(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	cs := connectFace(t, e)
	pid := adoptStartedDaemon(t, e)
	if names := toolNames(t, cs); !slices.Contains(names, "plexus_status") {
		t.Fatalf("tools: %v", names)
	}
	cs.Close()
	// The daemon outlives the face; stop it.
	stopStartedDaemon(t, pid)
}

// adoptStartedDaemon returns the pid of the daemon that `plexus mcp`
// started for home e (from its lock file), made the test's own: that
// daemon runs in a session of its own, and ends with the test should the
// test fail.
func adoptStartedDaemon(t *testing.T, e *testenv.Env) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Home, "daemon.lock"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	testenv.OwnGroup(t, pid)
	return pid
}

// stopStartedDaemon ends such a daemon and waits until it is gone.
func stopStartedDaemon(t *testing.T, pid int) {
	t.Helper()
	syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the daemon plexus mcp started did not stop")
		}
	}
}

// TestMCPFaceWrites: with allowWrite on, an agent can restart and switch
// servers, and propose one — which stays pending, not started, until a
// person approves it (R-FACE-2, R-FACE-6).
func TestMCPFaceWrites(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	if err := os.MkdirAll(e.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(`{"mcp": {"face": {"allowWrite": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	cs := connectFace(t, e)
	names := toolNames(t, cs)
	for _, want := range []string{"plexus_restart", "plexus_set_enabled", "plexus_add_server"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s missing with allowWrite on: %v", want, names)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plexus_add_server", Arguments: map[string]any{
		"name": "proposed", "config": map[string]any{"type": "stdio", "command": e.Bin, "args": []string{"example-server"}}}})
	if err != nil || res.IsError {
		t.Fatalf("plexus_add_server: %+v %v", res, err)
	}
	st := servers(t, e)["proposed"]
	if !st.NeedsApproval || st.State == "ready" || st.PID != 0 {
		t.Fatalf("a server an agent added is running: %+v", st)
	}
	e.MustRun("approve", "proposed", "--yes")
	waitState(t, e, "proposed", "ready", 20*time.Second)

	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plexus_set_enabled", Arguments: map[string]any{"name": "proposed", "enabled": false}})
	if err != nil || res.IsError {
		t.Fatalf("plexus_set_enabled: %+v %v", res, err)
	}
	if st := servers(t, e)["proposed"]; st.State != "disabled" {
		t.Fatalf("after plexus_set_enabled false: %+v", st)
	}
}

// TestMCPFaceNotifiesSessionClient: an editor of the session era (as Claude
// Code is) registered on `plexus mcp` is told when the tools change — a
// server added meanwhile — and then sees and calls the new tools.
func TestMCPFaceNotifiesSessionClient(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	// A new home has no settings file yet.
	if err := os.WriteFile(filepath.Join(e.Home, "extensions.json"), []byte(`{"mcp": {"face": {"allowExternalCall": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.MustRun("reload")

	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cmd := exec.Command(e.Bin, "mcp")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, testenv.Transport(t, cmd), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s, want the session era", v)
	}
	before := toolNames(t, cs)

	e.MustRun("add", "example", "--", e.Bin, "example-server")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after a server was added")
	}
	after := toolNames(t, cs)
	if slices.Contains(before, echo) || !slices.Contains(after, echo) {
		t.Fatalf("tools before %v, after %v", before, after)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": "session era"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "session era" {
		t.Fatalf("echo: %+v %v", res, err)
	}
}
