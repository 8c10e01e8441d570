package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// Launchd is the Manager of a launchd agent, Dir/dev.plexus.daemon.plist,
// in the user's GUI domain. Never run: macOS is cross-compiled only.
type Launchd struct {
	Dir string // ~/Library/LaunchAgents
	run runner
}

func launchAgentsDir(userHome string) string {
	return filepath.Join(userHome, "Library", "LaunchAgents")
}

func (m *Launchd) path() string { return filepath.Join(m.Dir, Label+".plist") }

func domain() string { return "gui/" + strconv.Itoa(os.Getuid()) }

// Install writes the agent, creates its log folder, and bootstraps it.
func (m *Launchd) Install(ctx context.Context, s Spec) (Result, error) {
	plist, err := LaunchdPlist(s)
	if err != nil {
		return Result{}, err
	}
	logs := LaunchdLogs(s.UserHome)
	for _, d := range []string{m.Dir, filepath.Dir(logs)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Result{}, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := atomicfile.WriteFile(m.path(), []byte(plist), 0o644); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", m.path(), err)
	}
	r := Result{Path: m.path(), Logs: logs}
	// A loaded agent must be booted out before a new plist takes effect.
	m.run(ctx, "launchctl", "bootout", domain()+"/"+Label)
	if _, err := m.run(ctx, "launchctl", "bootstrap", domain(), m.path()); err != nil {
		r.Todo = []string{"launchctl bootstrap " + domain() + " " + m.path()}
		return r, fmt.Errorf("wrote %s, but %w", m.path(), err)
	}
	r.Started = true
	r.Message = "installed " + m.path() + ": launchd starts the daemon at login and restarts it if it fails"
	return r, nil
}

// Uninstall boots the agent out and removes the plist.
func (m *Launchd) Uninstall(ctx context.Context) (Result, error) {
	r := Result{Path: m.path()}
	if _, err := os.Stat(m.path()); errors.Is(err, os.ErrNotExist) {
		r.Message = "no agent at " + m.path() + ": nothing to remove"
		return r, nil
	}
	_, err := m.run(ctx, "launchctl", "bootout", domain()+"/"+Label)
	r.Started = err == nil
	if err := os.Remove(m.path()); err != nil {
		return r, fmt.Errorf("removing %s: %w", m.path(), err)
	}
	r.Message = "removed " + m.path()
	return r, nil
}

// Status asks launchd about the agent.
func (m *Launchd) Status(ctx context.Context) (Status, error) {
	st := Status{Path: m.path()}
	if _, err := os.Stat(m.path()); err != nil {
		st.Message = "not installed: run `plexus service install`"
		return st, nil
	}
	st.Installed = true
	if _, err := m.run(ctx, "launchctl", "print", domain()+"/"+Label); err != nil {
		st.State = "not loaded"
	} else {
		st.State = "loaded"
	}
	st.Message = "installed at " + m.path() + ", " + st.State
	return st, nil
}
