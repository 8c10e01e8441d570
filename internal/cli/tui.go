package cli

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/tui"
)

func (a *app) tuiCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tui",
		Short: "Open the /mcp screen: see and change servers in the terminal",
		Long: `Open the /mcp screen: every server with its state, followed live, and one
form to add or edit a server. n adds a server, enter edits the selected one,
d deletes it, space switches it on or off, ? lists every key, q quits.

Like every command it changes servers only through the daemon: nothing is
written until a form is saved, and a server that cannot start is not saved.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, inOK := a.env.Stdin.(*os.File)
			out, outOK := a.env.Stdout.(*os.File)
			if !inOK || !outOK || !isTerminal(in) || !isTerminal(out) {
				return errors.New("plexus tui needs a terminal on stdin and stdout: for scripts, use `plexus ls --json` and `plexus events`")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			// Fail before taking over the screen if the daemon is not there.
			if _, err := c.Status(cmd.Context()); err != nil {
				return err
			}
			return tui.Run(cmd.Context(), c, in, out)
		},
	}
}
