package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) revisionsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revisions",
		Short: "List the kept versions of the settings file, to undo an overwrite",
		Long: `Every save of $PLEXUS_HOME/extensions.json — by the CLI, the terminal UI,
the web page, an agent, a reload or a restore — first keeps the version it
replaces under $PLEXUS_HOME/revisions/ (the last 20). List them, newest
first, and put one back with ` + "`plexus revisions restore NAME`" + `.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			rs, err := c.Revisions(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout(), rs.Revisions)
			}
			if len(rs.Revisions) == 0 {
				a.progressf("no kept versions yet: one is kept at every save")
				return nil
			}
			for _, r := range rs.Revisions {
				fmt.Fprintf(a.stdout(), "%s  replaced %s  %d bytes\n", sanitize(r.Name), r.Saved.Local().Format(time.DateTime), r.Size)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	cmd.AddCommand(&cobra.Command{
		Use:   "restore NAME",
		Short: "Put a kept version back as the settings file and apply it",
		Long: `Put the kept version NAME (from ` + "`plexus revisions`" + `) back as
$PLEXUS_HOME/extensions.json and apply it as ` + "`plexus reload`" + ` does. The file it
replaces is kept in turn, so a restore can be undone the same way.`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			stop := a.progressAfter("applying the settings…")
			wr, err := c.RestoreRevision(cmd.Context(), args[0])
			stop()
			if err != nil {
				return fmt.Errorf("restoring %s: %w", args[0], err)
			}
			fmt.Fprintf(a.stdout(), "restored %s (revision %d)\n", args[0], wr.Revision)
			return nil
		},
	})
	return cmd
}
