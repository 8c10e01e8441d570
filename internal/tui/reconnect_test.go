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

// TestOlderListDoesNotOverwriteNewer: the lists asked of the daemon come
// back in any order; one asked while a server was starting, arriving
// after the one asked once it was ready, must not put it back to
// "starting" (no event would come to correct it).
func TestOlderListDoesNotOverwriteNewer(t *testing.T) {
	m := New(context.Background(), client.New(t.TempDir()))
	m.refresh() // list 1
	m.refresh() // list 2 (their answers are given by hand below)
	starting := &apitype.ServerList{Servers: []apitype.ServerStatus{{Name: "example", State: apitype.StateStarting}}}
	ready := &apitype.ServerList{Servers: []apitype.ServerStatus{{Name: "example", State: apitype.StateReady, Tools: 6}}}
	m.daemonMsg(serversMsg{list: ready, n: 2})
	m.daemonMsg(serversMsg{list: starting, n: 1}) // the older answer, late
	if s, _ := m.selected(); s.State != apitype.StateReady || s.Tools != 6 {
		t.Fatalf("after the older list came last: %+v", s)
	}
	m.daemonMsg(serversMsg{list: starting, n: 3}) // a newer one is shown
	if s, _ := m.selected(); s.State != apitype.StateStarting {
		t.Fatalf("a newer list was not shown: %+v", s)
	}
}
