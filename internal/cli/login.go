package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

func (a *app) loginCommand() *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to a remote server that uses OAuth",
		Long: `Log in to a remote server with OAuth 2.1. The daemon finds the server's
authorization server, registers itself if it has to, and waits for your
browser on a loopback address; this command opens the browser (or prints
the URL) and waits until the login is done. The login is the daemon's: every
agent using Plexus shares it, and the daemon refreshes its tokens before they
expire.

With --no-browser (a machine without a browser, or one whose browser cannot
reach this machine), open the printed URL anywhere, log in, and paste back
the address your browser was sent to (it starts with http://127.0.0.1).`,
		Example: `  plexus add linear https://mcp.linear.app/mcp
  plexus login linear
  plexus login linear --no-browser`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			a.loginJSON = wantsJSON(cmd)
			return a.login(cmd.Context(), c, args[0], noBrowser)
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the URL and read the redirected address from stdin")
	return cmd
}

func (a *app) logoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget a server's OAuth tokens and registration",
		Long: `Forget the OAuth tokens and the client registration the daemon holds for a
server. The server then asks for a login again (plexus login NAME).`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if _, err := c.Logout(cmd.Context(), args[0]); err != nil {
				return serverNotFound(fmt.Errorf("logging out of %s: %w", args[0], err))
			}
			return a.done(cmd, okResult{OK: true, Server: args[0]}, func() {
				fmt.Fprintf(a.stdout(), "logged out of %s: its tokens and registration are forgotten\n", args[0])
			})
		},
	}
}

func (a *app) login(ctx context.Context, c *client.Client, name string, noBrowser bool) error {
	// Follow the events first, so that the end of the login is not missed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, evErr := c.Events(ctx)
	start, err := c.Login(ctx, name, apitype.LoginRequest{NoBrowser: noBrowser})
	if err != nil {
		return serverNotFound(fmt.Errorf("logging in to %s: %w", name, err))
	}
	if start.Grant != "" {
		fmt.Fprintf(a.stdout(), "logged in to %s (OAuth %s grant, no browser)\n", name, start.Grant)
		return nil
	}
	if err := checkOpenable(start.AuthURL); err != nil {
		return fmt.Errorf("logging in to %s: the daemon gave an authorization URL that %w; not opening it", name, err)
	}
	if noBrowser {
		fmt.Fprintf(a.stderr(), "Open this URL in a browser and log in to %s:\n\n  %s\n\n", name, start.AuthURL)
		fmt.Fprintf(a.stderr(), "Then paste the address the browser was sent to (it starts with %s) and press Enter:\n", start.RedirectURI)
		line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
		if strings.TrimSpace(line) == "" {
			if err == nil {
				err = errors.New("nothing was pasted")
			}
			return fmt.Errorf("logging in to %s: reading the redirected address: %w", name, err)
		}
		wr, err := c.CompleteLogin(ctx, name, strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("logging in to %s: %w", name, err)
		}
		return a.loggedIn(name, wr.Server)
	}
	fmt.Fprintf(a.stderr(), "Opening your browser to log in to %s. If it does not open, visit:\n\n  %s\n\n", name, start.AuthURL)
	if err := openBrowser(start.AuthURL); err != nil {
		a.warnf("could not open a browser (%v): open the URL above yourself", err)
	}
	if evErr != nil {
		return fmt.Errorf("logging in to %s: following the daemon's events: %w", name, evErr)
	}
	fmt.Fprintf(a.stderr(), "waiting for the browser (until %s)…\n", start.ExpiresAt.Local().Format(time.TimeOnly))
	return a.waitLogin(ctx, events, name, start.ExpiresAt)
}

// waitLogin follows name's status until the login ended: done once the
// server took the new token (the daemon started it with it), failed if it
// did not or the login went wrong.
func (a *app) waitLogin(ctx context.Context, events *client.EventStream, name string, until time.Time) error {
	// A login that got its tokens at the last moment still has the start
	// of the server to wait for.
	ctx, cancel := context.WithDeadline(ctx, until.Add(2*time.Minute))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { events.Close() })
	defer stop()
	begun, checking := false, false
	for {
		ev, err := events.Next()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("logging in to %s: the login expired before the browser came back; run `plexus login %s` again", name, name)
			}
			return fmt.Errorf("logging in to %s: %w", name, err)
		}
		if ev.Server != name || ev.Status == nil || ev.Status.Auth == nil {
			continue
		}
		au := ev.Status.Auth
		switch {
		case au.Login == "failed":
			return fmt.Errorf("logging in to %s: %s", name, au.LoginError)
		case au.Login == "waiting":
			begun = true
		case au.Login == "checking" && !checking:
			begun, checking = true, true
			fmt.Fprintf(a.stderr(), "logged in; starting %s with the new token…\n", name)
		case begun && au.Login == "" && au.LoggedIn && !au.NeedsLogin && ev.Status.State == apitype.StateReady:
			// The login is over, and the server, started again with the
			// new token, took it.
			return a.loggedIn(name, ev.Status)
		}
	}
}

// checkOpenable is the last check before a URL reaches a browser: http(s)
// only, never something an opener could take for an option.
func checkOpenable(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || strings.HasPrefix(raw, "-") || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("is not an http(s) URL")
	}
	return nil
}

// openBrowser opens raw with the platform's opener ($BROWSER, else xdg-open
// or open), as an argument vector: no shell ever sees the URL (R-AUTH-4).
func openBrowser(raw string) error {
	opener := os.Getenv("BROWSER")
	if opener == "" {
		opener = "xdg-open"
		if runtime.GOOS == "darwin" {
			opener = "open"
		}
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, raw)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; the opener returns at once or lives on as the browser
	return nil
}

// loggedIn prints the end of a login: the server's status as JSON with
// --json, else a line for people.
func (a *app) loggedIn(name string, st *apitype.ServerStatus) error {
	if au := st.Auth; au != nil && au.LoggedIn && !au.RefreshToken && au.ExpiresAt != nil {
		a.warnf("the authorization server issued no refresh token: this login ends at %s (in %s); log in again then (`plexus login %s`)",
			au.ExpiresAt.Local().Format(time.DateTime), shortDuration(time.Until(*au.ExpiresAt)), name)
	}
	if a.loginJSON {
		return printJSON(a.stdout(), st)
	}
	fmt.Fprintf(a.stdout(), "logged in to %s (%s)\n", name, summary(st))
	return nil
}
