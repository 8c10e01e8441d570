// Package service starts the daemon at login with each system's own
// service manager: a systemd user unit on Linux, a launchd agent on macOS,
// a per-user scheduled task on Windows, an rc.d script on FreeBSD. Each
// restarts the daemon when it fails and sends its output where that
// system's users look for logs.
//
// The files are rendered by pure functions (render.go, golden files in
// testdata); a Manager writes one and asks the service manager to start it
// (systemd.go, launchd.go, schtasks.go, rcd.go). Only the systemd manager
// runs here; the others are exercised through their renderers and the
// commands they would run.
package service

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Name is the service's name for every manager: the unit plexus.service,
// the scheduled task Plexus, the rc.d script plexus.
const Name = "plexus"

// Label is the launchd label.
const Label = "dev.plexus.daemon"

// Spec is what a service runs: `Exe daemon [--listen Listen]` with
// PLEXUS_HOME=Home.
type Spec struct {
	Exe  string // absolute path of the plexus binary
	Home string // the daemon's home ($PLEXUS_HOME)
	// Listen is the daemon's loopback address (--listen), "" for its
	// default.
	Listen string
	// User is the account name (FreeBSD's rc.d runs the daemon as it);
	// UserHome the account's home (launchd's log folder).
	User, UserHome string
}

// Result says what a Manager did, for people: the file it wrote or
// removed, and what still needs doing when it could not finish.
type Result struct {
	Path string `json:"path"`
	// Started: the service manager runs it now (install) or stopped it
	// (uninstall).
	Started bool `json:"started"`
	// Todo is what the user must still do, as commands to run; empty when
	// all is done.
	Todo    []string `json:"todo,omitempty"`
	Message string   `json:"message"`
	// Logs says where the daemon's output goes.
	Logs string `json:"logs,omitempty"`
}

// Status is what is known of the installed service.
type Status struct {
	Path      string `json:"path"`
	Installed bool   `json:"installed"`
	// State is the service manager's word for it ("active", "failed",
	// "running"), or "" when the manager cannot be asked.
	State   string `json:"state,omitempty"`
	Message string `json:"message"`
	Logs    string `json:"logs,omitempty"`
}

// Manager installs, removes and reports the login service on one system.
type Manager interface {
	Install(ctx context.Context, s Spec) (Result, error)
	Uninstall(ctx context.Context) (Result, error)
	Status(ctx context.Context) (Status, error)
}

// runner runs a service manager's command and returns its combined output.
type runner func(ctx context.Context, name string, args ...string) (string, error)

func runCommand(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && text != "" {
			return text, fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), firstLine(text))
		}
		return text, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return text, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// For returns the Manager of system goos ("linux", "darwin", "windows",
// "freebsd") for the user whose home is userHome, where config is the
// user's configuration folder ($XDG_CONFIG_HOME or ~/.config; %APPDATA% on
// Windows). Other systems have none.
func For(goos, userHome, config string) (Manager, error) {
	switch goos {
	case "linux":
		return &Systemd{Dir: systemdUserDir(config), run: runCommand}, nil
	case "darwin":
		return &Launchd{Dir: launchAgentsDir(userHome), run: runCommand}, nil
	case "windows":
		return &Schtasks{Dir: config, run: runCommand}, nil
	case "freebsd":
		return &RCD{Dir: rcdUserDir(config), run: runCommand}, nil
	}
	return nil, fmt.Errorf("plexus service knows no service manager on %s: start `plexus daemon` from your session's startup", goos)
}
