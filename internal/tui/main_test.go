package tui

import (
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

// sgr is a Select Graphic Rendition sequence: colour, bold, reverse.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// plain is a frame with its colours and bold taken out (hyperlinks kept),
// so that screens compare as text and states must read by their words
// alone.
func plain(frame string) string { return sgr.ReplaceAllString(frame, "") }

// TestMain fails on goroutines left behind: the event stream's reader and
// every request end with the model.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The harness's own watcher of SIGINT, one per test model, which
		// it never ends; nothing of ours.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		// A tea.Tick's timer wait, which Bubble Tea does not stop when the
		// program quits: it ends when its duration is up (the reconnect
		// tick: 2 s), after a last test that quit while the daemon was
		// away (TestCrashAndDaemonRestartShowLive run alone).
		goleak.IgnoreTopFunction("charm.land/bubbletea/v2.Tick.func1"),
		// The harness's thread that starts every process of the test
		// binary, kept for the binary's life (testenv.Start).
		goleak.IgnoreTopFunction("github.com/plexus-mcp/plexus/internal/testenv.starterLoop"))
}
