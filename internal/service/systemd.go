package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// Systemd is the Manager of a systemd user unit, Dir/plexus.service.
type Systemd struct {
	Dir string // ~/.config/systemd/user
	run runner
}

func systemdUserDir(config string) string { return filepath.Join(config, "systemd", "user") }

const unitName = Name + ".service"

const journalHint = "journalctl --user -u " + unitName

func (m *Systemd) path() string { return filepath.Join(m.Dir, unitName) }

// Install writes the unit and, when a systemd user instance runs, enables
// and starts it. Without one the unit is written all the same and Result
// says what is missing and what to run.
func (m *Systemd) Install(ctx context.Context, s Spec) (Result, error) {
	unit, err := SystemdUnit(s)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating %s: %w", m.Dir, err)
	}
	if err := atomicfile.WriteFile(m.path(), []byte(unit), 0o644); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", m.path(), err)
	}
	r := Result{Path: m.path(), Logs: journalHint}
	todo := []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + unitName}
	if why, ok := m.userInstance(ctx); !ok {
		r.Todo = todo
		r.Message = "wrote " + m.path() + ", but no systemd user instance runs here (" + why + "), so nothing was started. " +
			"Where one runs (a login through systemd-logind; or `loginctl enable-linger " + userName() + "` for one from boot), " +
			"run the commands below; without one, run `plexus daemon` yourself"
		return r, nil
	}
	for _, args := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", unitName}} {
		if _, err := m.run(ctx, "systemctl", args...); err != nil {
			r.Todo = todo
			return r, fmt.Errorf("wrote %s, but %w", m.path(), err)
		}
	}
	r.Started = true
	r.Message = "installed " + m.path() + ": systemd starts the daemon at login and restarts it if it fails"
	return r, nil
}

// userInstance reports whether a systemd user instance answers; if not,
// why, in systemctl's words.
func (m *Systemd) userInstance(ctx context.Context) (string, bool) {
	out, err := m.run(ctx, "systemctl", "--user", "is-system-running")
	switch {
	case err == nil:
		return "", true
	case errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "executable file not found"):
		return "systemctl is not installed", false
	}
	// is-system-running exits non-zero for "degraded" too: that instance
	// runs, and starts units.
	if state := firstLine(out); state == "degraded" || state == "starting" || state == "initializing" {
		return "", true
	}
	return firstLine(out), false
}

// Uninstall stops and disables the unit when systemd runs, and removes the
// file.
func (m *Systemd) Uninstall(ctx context.Context) (Result, error) {
	r := Result{Path: m.path()}
	if _, err := os.Stat(m.path()); errors.Is(err, os.ErrNotExist) {
		r.Message = "no unit at " + m.path() + ": nothing to remove"
		return r, nil
	}
	_, running := m.userInstance(ctx)
	if running {
		if _, err := m.run(ctx, "systemctl", "--user", "disable", "--now", unitName); err != nil {
			return r, err
		}
		r.Started = true
	}
	if err := os.Remove(m.path()); err != nil {
		return r, fmt.Errorf("removing %s: %w", m.path(), err)
	}
	if running {
		m.run(ctx, "systemctl", "--user", "daemon-reload")
	}
	r.Message = "removed " + m.path()
	if !running {
		r.Message += " (no systemd user instance runs here, so nothing was stopped)"
	}
	return r, nil
}

// Status says whether the unit is installed and, when systemd runs, its
// state.
func (m *Systemd) Status(ctx context.Context) (Status, error) {
	st := Status{Path: m.path(), Logs: journalHint}
	_, err := os.Stat(m.path())
	st.Installed = err == nil
	if !st.Installed {
		st.Message = "not installed: run `plexus service install`"
		return st, nil
	}
	why, ok := m.userInstance(ctx)
	if !ok {
		st.Message = "installed at " + m.path() + "; no systemd user instance runs here (" + why + ") to start it"
		return st, nil
	}
	out, _ := m.run(ctx, "systemctl", "--user", "is-active", unitName)
	st.State = firstLine(out)
	st.Message = "installed at " + m.path() + ", " + st.State
	return st, nil
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "$USER"
}
