package tui

import (
	"context"
	"errors"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// TestReconnectClearsTheConnectionError: once the daemon answers again, the
// screen no longer says it cannot be reached — also when a retry failed
// while it was away, which is what a slow restart (a race-built daemon)
// looks like.
func TestReconnectClearsTheConnectionError(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	m.daemonMsg(connectedMsg{err: errors.New("the daemon is not running")})
	if m.errMsg == "" {
		t.Fatal("a failed connect shows no error")
	}
	m.daemonMsg(connectedMsg{list: &apitype.ServerList{}})
	if m.errMsg != "" {
		t.Errorf("after reconnecting the screen still says %q", m.errMsg)
	}
}
