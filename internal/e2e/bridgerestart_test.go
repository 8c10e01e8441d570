package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestMCPBridgeSurvivesDaemonRestart: an editor starts `plexus mcp` once
// and keeps it, in each protocol era. The daemon behind it restarted (an upgrade, the service
// manager), then stopped and not restarted by anyone: each time the
// editor's next call works, on a session the bridge opened again, and the
// editor is told the tool list changed — rather than every call failing
// with "session not found" until the editor is restarted.
func TestMCPBridgeSurvivesDaemonRestart(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"2025-11-25", "2025-06-18", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) { bridgeSurvivesRestart(t, protocol) })
	}
}

func bridgeSurvivesRestart(t *testing.T, protocol string) {
	sessions := protocol != "2026-07-28" // a 2026 client has no session to lose
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	waitState(t, e, "example", "ready", 30*time.Second)
	echo := toolNamed(t, tools(t, e), "example", "echo").Name

	changed := make(chan struct{}, 16)
	cmd := exec.Command(e.Bin, "mcp")
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+e.Home)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	defer func() {
		if t.Failed() {
			t.Logf("plexus mcp said:\n%s", stderr.String())
		}
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "editor", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	// A session-era client, as editors are: it holds a protocol session,
	// which the restarted daemon does not know.
	cs, err := c.Connect(t.Context(), testenv.Transport(t, cmd), &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(text string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echo, Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo %q: %+v %v", text, res, err)
		}
	}
	told := func(what string) {
		t.Helper()
		if !sessions {
			return // it learns of changes by subscriptions/listen, not followed here
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the editor was not told that the tools changed", what)
		}
	}
	call("before")

	e.StopDaemon()
	e.StartDaemon()
	// Its catalog known, the server waits for its first use: the call
	// starts it.
	waitState(t, e, "example", "idle", 30*time.Second)
	call("after a restart")
	told("after a restart")

	// Stopped, and nobody starts it: the bridge does, as it does when it
	// starts. That daemon is this test's to stop.
	e.StopDaemon()
	for len(changed) > 0 {
		<-changed
	}
	// The daemon the bridge starts runs in a session of its own: should a
	// check fail before it is adopted below, it is still ended with the
	// test, not left running.
	pid := 0
	defer func() {
		if pid == 0 {
			if b, err := os.ReadFile(filepath.Join(e.Home, "daemon.lock")); err == nil {
				if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 0 {
					testenv.OwnGroup(t, p)
				}
			}
		}
	}()
	call("after a stop")
	told("after a stop")
	pid = adoptStartedDaemon(t, e)
	cs.Close()
	stopStartedDaemon(t, pid)
}
