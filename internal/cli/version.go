package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/buildinfo"
)

func (a *app) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print this plexus's version, commit, Go and platform",
		Long: `Print the version of this plexus binary, the commit it was built from, the Go
that built it and the platform, from the build information the go command
stamps into every binary. The running daemon says its own in ` + "`plexus status`" + `.`,
		Example: `  plexus version
  plexus version --json
  plexus --version`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := buildinfo.Get()
			if asJSON {
				return printJSON(a.stdout(), in)
			}
			fmt.Fprintln(a.stdout(), in)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
