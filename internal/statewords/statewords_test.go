package statewords

import (
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		s    apitype.ServerStatus
		want string
	}{
		{apitype.ServerStatus{Enabled: true, State: apitype.StateReady}, Ready},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateStarting}, Starting},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateFailed, Auth: &apitype.AuthStatus{NeedsLogin: true}}, NeedsLogin},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateReady, Auth: &apitype.AuthStatus{NeedsLogin: true}}, Ready},
		// A login that is over is a state of its own, whatever the HTTP
		// status behind it: never "unauthorized", never "crash-looping".
		{apitype.ServerStatus{Enabled: true, State: apitype.StateNeedsLogin, HTTPStatus: 401, Auth: &apitype.AuthStatus{}}, NeedsLogin},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateNeedsLogin, CrashLooping: true}, NeedsLogin},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateFailed, HTTPStatus: 401}, Unauthorized},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateFailed, HTTPStatus: 500}, Failed},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateBackoff}, Backoff},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateBackoff, CrashLooping: true}, CrashLooping},
		{apitype.ServerStatus{Enabled: false, State: apitype.StateDisabled}, Disabled},
		{apitype.ServerStatus{Enabled: false}, Disabled},
		{apitype.ServerStatus{Enabled: true, NeedsApproval: true, State: apitype.StateFailed}, NeedsApproval},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateStopped}, Stopped},
		// Stopped when idle is not a failure, nor "stopped" (removed).
		{apitype.ServerStatus{Enabled: true, State: apitype.StateIdle}, Idle},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateWaking}, Waking},
		// npm installing the package of a start, on demand or not.
		{apitype.ServerStatus{Enabled: true, State: apitype.StateWaking, Installing: true}, Installing},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateStarting, Installing: true}, Installing},
		{apitype.ServerStatus{Enabled: true, State: apitype.StateReady, Installing: true}, Ready},
	} {
		if got := Of(tc.s); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestWhere(t *testing.T) {
	if got := Where(apitype.ServerStatus{State: apitype.StateReady}); got != "" {
		t.Errorf("a server this replica runs: %q", got)
	}
	if got := Where(apitype.ServerStatus{State: apitype.StateReady, RunsOn: "0123456789abcdef"}); got != " on replica 0123456789abcdef" {
		t.Errorf("a server another replica runs: %q", got)
	}
}
