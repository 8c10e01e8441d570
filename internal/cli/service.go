package cli

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/service"
)

func (a *app) serviceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Start the daemon at login with your system's service manager",
		Long: `Have your system's service manager start the daemon at login and restart
it if it fails: a systemd user unit on Linux, a launchd agent on macOS, a
scheduled task on Windows, an rc.d script on FreeBSD. The service runs this
plexus binary with this PLEXUS_HOME.`,
		Example: `  plexus service install
  plexus service status
  plexus service uninstall`,
	}
	for _, verb := range []string{"install", "uninstall", "status"} {
		cmd.AddCommand(a.serviceVerbCommand(verb))
	}
	return cmd
}

func (a *app) serviceVerbCommand(verb string) *cobra.Command {
	var asJSON bool
	var listen, home string
	short := map[string]string{
		"install":   "Write the service file and start the daemon through it",
		"uninstall": "Stop the service and remove its file",
		"status":    "Show whether the service is installed and running",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb,
		Short: short,
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := serviceManager()
			if err != nil {
				return err
			}
			var out any
			var r service.Result
			switch verb {
			case "install":
				var s service.Spec
				if s, err = serviceSpec(home, listen); err == nil {
					r, err = m.Install(cmd.Context(), s)
				}
				out = r
			case "uninstall":
				r, err = m.Uninstall(cmd.Context())
				out = r
			case "status":
				var st service.Status
				st, err = m.Status(cmd.Context())
				out = st
				if err == nil && !asJSON {
					fmt.Fprintln(a.stdout(), st.Message)
					if st.Logs != "" {
						fmt.Fprintln(a.stdout(), "logs:", st.Logs)
					}
					return nil
				}
			}
			if err != nil {
				a.printTodo(r.Todo)
				return err
			}
			if asJSON {
				return printJSON(a.stdout(), out)
			}
			fmt.Fprintln(a.stdout(), r.Message)
			if r.Logs != "" {
				fmt.Fprintln(a.stdout(), "logs:", r.Logs)
			}
			a.printTodo(r.Todo)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	if verb == "install" {
		cmd.Flags().StringVar(&listen, "listen", "", "the daemon's loopback `ADDRESS` (plexus daemon --listen; default 127.0.0.1:7780, off for none)")
		cmd.Flags().StringVar(&home, "home", "", "the daemon's home `DIR` (default $PLEXUS_HOME, else ~/.plexus)")
		cmd.Example = `  plexus service install
  plexus service install --listen 127.0.0.1:7790 --home ~/work/plexus`
	}
	return cmd
}

// printTodo lists the commands the user must still run, on stderr.
func (a *app) printTodo(todo []string) {
	if len(todo) == 0 {
		return
	}
	a.warnf("to finish, run:")
	for _, c := range todo {
		a.warnf("  %s", c)
	}
}

// serviceManager is this system's, for this user.
func serviceManager() (service.Manager, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("cannot find your home directory: %w", err)
	}
	config := filepath.Join(home, ".config")
	if runtime.GOOS == "windows" {
		config, err = os.UserConfigDir()
		if err != nil {
			return nil, err
		}
	} else if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		config = x
	}
	return service.For(runtime.GOOS, home, config)
}

// serviceSpec is what the service will run: this binary, on home (""
// for PLEXUS_HOME's) and listen.
func serviceSpec(home, listen string) (service.Spec, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return service.Spec{}, fmt.Errorf("finding the plexus binary: %w", err)
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return service.Spec{}, errors.New("this plexus was built by `go run` into a temporary folder: install it first (`go install ./cmd/plexus`) and run that one")
	}
	if home == "" {
		if home, err = client.Home(); err != nil {
			return service.Spec{}, err
		}
	} else if home, err = filepath.Abs(home); err != nil {
		return service.Spec{}, err
	}
	userHome, _ := os.UserHomeDir()
	s := service.Spec{Exe: exe, Home: home, Listen: listen, UserHome: userHome}
	if u, err := user.Current(); err == nil {
		s.User = u.Username
	}
	return s, nil
}
