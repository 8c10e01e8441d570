package tui

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"go.uber.org/goleak"
)

// TestMain turns colour off, so that screens compare as text and states
// must read by their words alone, and fails on goroutines left behind: the
// event stream's reader and every request end with the model.
func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	goleak.VerifyTestMain(m,
		// The harness's own watcher of SIGINT, one per test model, which
		// it never ends; nothing of ours.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
		// The harness's thread that starts every process of the test
		// binary, kept for the binary's life (testenv.Start).
		goleak.IgnoreTopFunction("github.com/plexus-mcp/plexus/internal/testenv.starterLoop"))
}
