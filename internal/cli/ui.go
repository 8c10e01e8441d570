package cli

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"
)

func (a *app) uiCommand() *cobra.Command {
	var noBrowser, asJSON bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the web page: Settings → MCP Servers",
		Long: `Open the daemon's web page in your browser, logged in with a one-time link.
The page manages the servers like the CLI does: add, edit, delete, enable,
disable, restart, secrets, approvals, the request timeouts; and it shows
their state live.

The link works once, for two minutes, and gives the browser a session
cookie; the page never sees the daemon's token. With --no-browser, or when
no browser can be opened (no xdg-open or open, no display), the link is
printed instead: open it on this machine.`,
		Example: `  plexus ui
  plexus ui --no-browser`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			link, err := c.UILogin(cmd.Context())
			if err != nil {
				return fmt.Errorf("getting a login link: %w", err)
			}
			if asJSON {
				return ndjson(a.stdout()).Encode(link)
			}
			if !noBrowser {
				if opener := browserOpener(); opener != "" {
					// An argument vector, never a shell: the link is data.
					if err := exec.Command(opener, link.URL).Start(); err == nil {
						fmt.Fprintln(a.stderr(), "opened the web page in your browser; if nothing appeared, open this link (valid once, for 2 minutes):")
						fmt.Fprintln(a.stdout(), link.URL)
						return nil
					}
				}
			}
			fmt.Fprintln(a.stderr(), "open this link in a browser on this machine (valid once, for 2 minutes):")
			fmt.Fprintln(a.stdout(), link.URL)
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the login link instead of opening a browser")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the link and its expiry as JSON; open nothing")
	return cmd
}

// browserOpener returns the platform's command that opens a URL in the
// user's browser, or "" when there is none or no display to open it on.
func browserOpener() string {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return ""
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return ""
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}
