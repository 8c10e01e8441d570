package tui

import (
	"strings"
	"testing"
)

// TestTerminalSettings: in a real terminal, the list says that external
// calls are off; s opens the settings screen, space switches them on and
// a typed number sets the call timeout — both saved by the daemon, as
// `plexus settings get` shows — and esc goes back to a list that no
// longer warns.
func TestTerminalSettings(t *testing.T) {
	e, x, _ := startExampleTUI(t)
	x.waitText("example", "● ready", "external calls are off")

	x.must("send-keys", "-t", "tui", "s")
	x.waitGolden("tmux-settings", 80, 24, "› settings", "face.allowExternalCall", "○ off", "60000 (default)")
	x.must("send-keys", "-t", "tui", "Space")
	x.waitText("saved face.allowExternalCall")
	if got := strings.TrimSpace(e.MustRun("settings", "get", "face.allowExternalCall")); got != "true" {
		t.Fatalf("after space on the settings screen: face.allowExternalCall = %s", got)
	}
	x.must("send-keys", "-t", "tui", "Down", "Down", "Enter")
	x.must("send-keys", "-t", "tui", "-l", "45x")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("callTimeoutMs takes a number")
	x.must("send-keys", "-t", "tui", "BSpace")
	x.must("send-keys", "-t", "tui", "-l", "000")
	x.must("send-keys", "-t", "tui", "Enter")
	x.waitText("saved callTimeoutMs")
	if got := strings.TrimSpace(e.MustRun("settings", "get", "callTimeoutMs")); got != "45000" {
		t.Fatalf("after typing 45000: callTimeoutMs = %s", got)
	}
	// The policy, set with the CLI, shows when the screen opens again.
	e.MustRun("settings", "set", "policy.rules", `[{"tool": "example_ec*", "action": "askEveryCall"}]`)
	x.must("send-keys", "-t", "tui", "Escape")
	x.waitText("NAME", "example")
	x.must("send-keys", "-t", "tui", "s")
	x.waitText("1 rules, 0 limits", "1. askEveryCall: tool example_ec*, client any, profile any")
	x.must("send-keys", "-t", "tui", "Escape")
	x.waitText("NAME", "example")

	// A call the policy asks about, from a caller that cannot be asked
	// (plexus call), waits; the list says so, and A approves it.
	done := make(chan string, 1)
	go func() { done <- e.MustRun("call", "example_echo", `{"text": "approved-in-the-tui"}`) }()
	x.waitText("1 call(s) to approve · A yes · D no · example_echo by the API")
	x.must("send-keys", "-t", "tui", "A")
	if out := <-done; !strings.Contains(out, "approved-in-the-tui") {
		t.Errorf("plexus call after A: %s", out)
	}
	s := x.waitText("NAME", "example", "approved the call of example_echo")
	if strings.Contains(s, "external calls are off") {
		t.Fatalf("the list still warns after external calls were switched on:\n%s", s)
	}
}
