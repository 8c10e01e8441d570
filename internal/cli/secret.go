package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// maxSecret bounds a secret read from stdin; real tokens and keys are far
// smaller, and a mistaken pipe of a large file should fail, not be stored.
const maxSecret = 1 << 20

func (a *app) secretCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Manage the secrets that servers refer to by name",
		Long: `Manage the daemon's secrets. Settings refer to a secret by name
({"env": "VAR"}, --header NAME=VAR, --env NAME=VAR, --bearer-env VAR); the value
is stored by the daemon only, and is never shown again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("give a subcommand: set, rm or ls")
		},
	}
	cmd.AddCommand(a.secretSetCommand(), a.secretRmCommand(), a.secretLsCommand())
	return cmd
}

func (a *app) secretSetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set VAR",
		Short: "Store a secret, read from stdin",
		Long: `Store the secret VAR. The value is read from stdin, never from the command
line, where it would stay in the shell's history and be visible to other
processes. At a terminal it is asked for without echo.`,
		Example: `  plexus secret set SEARCH_KEY
  plexus secret set GITHUB_TOKEN < token.txt
  pass show github | plexus secret set GITHUB_TOKEN`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("missing VAR")
			case len(args) > 1:
				// Not quoted back: it is likely the secret itself.
				return usagef("give only the name: the value is read from stdin, never from the command line")
			}
			if !varName.MatchString(args[0]) {
				// Not quoted back either, for the same reason.
				return usagef("VAR must be a variable name: letters, digits and _, not starting with a digit")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			c, err := a.client()
			if err != nil {
				return err
			}
			if a.stdinIsTerminal() {
				// Make sure the daemon answers before asking a person to
				// type a secret that could not be stored.
				if _, err := c.Secrets(cmd.Context()); err != nil {
					return err
				}
			}
			value, err := a.readSecret(name)
			if err != nil {
				return err
			}
			if err := c.SetSecret(cmd.Context(), name, value); err != nil {
				return fmt.Errorf("storing %s: %w", name, err)
			}
			return a.done(cmd, okResult{OK: true, Secret: name}, func() { fmt.Fprintf(a.stdout(), "stored secret %s\n", name) })
		},
	}
}

// stdinIsTerminal reports whether stdin is a terminal, where a person types.
func (a *app) stdinIsTerminal() bool {
	f, ok := a.env.Stdin.(*os.File)
	return ok && isTerminal(f)
}

// readSecret reads a secret's value from stdin: hidden at a terminal, else
// the whole input less one trailing newline (as `echo` and editors add).
func (a *app) readSecret(name string) (string, error) {
	var value string
	if a.stdinIsTerminal() {
		f := a.env.Stdin.(*os.File)
		fmt.Fprintf(a.stderr(), "Value of %s (not shown): ", name)
		v, err := readHidden(f)
		fmt.Fprintln(a.stderr())
		if err != nil {
			if errors.Is(err, errInterrupted) {
				return "", fmt.Errorf("interrupted: nothing stored")
			}
			return "", fmt.Errorf("reading the value: %w", err)
		}
		value = v
	} else {
		b, err := io.ReadAll(io.LimitReader(a.env.Stdin, maxSecret+1))
		if err != nil {
			return "", fmt.Errorf("reading the value from stdin: %w", err)
		}
		if len(b) > maxSecret {
			return "", fmt.Errorf("the value on stdin is larger than %d bytes: is it the right input?", maxSecret)
		}
		value = string(b)
		if v, ok := strings.CutSuffix(value, "\n"); ok {
			value = strings.TrimSuffix(v, "\r")
		}
	}
	if value == "" {
		return "", fmt.Errorf("the value is empty: give it on stdin, e.g. `plexus secret set %s < file`; to delete a secret use `plexus secret rm %s`", name, name)
	}
	return value, nil
}

func (a *app) secretRmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm VAR",
		Short: "Delete a secret",
		Args:  exactArgs("VAR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.DeleteSecret(cmd.Context(), args[0]); err != nil {
				return withRemedy(fmt.Errorf("deleting %s: %w", args[0], err), apitype.CodeNotFound,
					"see `plexus secret ls` for the stored secrets")
			}
			return a.done(cmd, okResult{OK: true, Secret: args[0]}, func() { fmt.Fprintf(a.stdout(), "deleted secret %s\n", args[0]) })
		},
	}
}

func (a *app) secretLsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the names of the stored secrets",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			sl, err := c.Secrets(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if sl.Names == nil {
					sl.Names = []string{}
				}
				return printJSON(a.stdout(), sl.Names)
			}
			if len(sl.Names) == 0 {
				a.progressf("no secrets: store one with `plexus secret set VAR`")
				return nil
			}
			for _, n := range sl.Names {
				fmt.Fprintln(a.stdout(), sanitize(n))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the names as a JSON array")
	return cmd
}
