package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// storeKeyFlags adds the flags of a database store's keys.
func storeKeyFlags(cmd *cobra.Command, so *StoreOptions) {
	cmd.Flags().StringVar(&so.KeyFile, "store-key-file", "", "`FILE` holding the key that seals the database store (base64 of 32 random bytes); or give the key in PLEXUS_STORE_KEY")
	cmd.Flags().StringArrayVar(&so.OldKeyFiles, "store-old-key-file", nil, "`FILE` holding a key of before a rotation: read, and sealed again under --store-key-file (repeatable)")
}

func (a *app) storeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move the settings between a home and a database store",
		Args:  exactArgs(),
	}
	cmd.AddCommand(a.storeMigrateCommand())
	return cmd
}

func (a *app) storeMigrateCommand() *cobra.Command {
	var o MigrateOptions
	cmd := &cobra.Command{
		Use:   "migrate --from HOME|URL --to HOME|URL",
		Short: "Copy the settings, revisions, secrets, tokens and pins to another store",
		Long: `Copy everything a daemon keeps — the settings with their kept revisions, the
secrets, the OAuth tokens and the pins — from a home directory to a
PostgreSQL database (postgres://…), or back, then read the copy back and
compare it with the source. The daemons of both must be stopped (a home's
lock is taken). A target that holds any of it already is refused unless
--force; nothing is removed from the source.`,
		Example: `  plexus store migrate --from ~/.plexus --to postgres://plexus@db/plexus --store-key-file key
  plexus store migrate --from postgres://plexus@db/plexus --to ./home --store-key-file key`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.From == "" || o.To == "" {
				return usagef("give both --from and --to")
			}
			if a.env.MigrateStore == nil {
				return fmt.Errorf("the migration: %w", errNoRunner)
			}
			out, err := a.env.MigrateStore(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.env.Stdout, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.From, "from", "", "the `HOME` directory or postgres:// URL to copy from")
	cmd.Flags().StringVar(&o.To, "to", "", "the `HOME` directory or postgres:// URL to copy to")
	cmd.Flags().BoolVar(&o.Force, "force", false, "copy over a target that holds settings already")
	storeKeyFlags(cmd, &o.Keys)
	return cmd
}
