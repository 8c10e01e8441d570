package tui

import (
	"context"
	"errors"
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/plexus-mcp/plexus/internal/client"
)

// Run runs the /mcp screen on a terminal until q or ctrl+c, or until ctx
// ends. It uses the alternate screen with the mouse off (Model.View), and
// restores the terminal when it returns.
func Run(ctx context.Context, c *client.Client, in io.Reader, out io.Writer) error {
	m := New(ctx, c)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the process is being stopped: not an error of the UI
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return nil
	}
	return err
}

func wrapHard(s string, w int) string { return ansi.Hardwrap(s, w, false) }
