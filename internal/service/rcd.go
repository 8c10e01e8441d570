package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// RCD is the Manager of the FreeBSD rc.d script. rc.d is the system's, so
// a user's install writes the script to Dir and says what root must run;
// run as root, it installs to /usr/local/etc/rc.d and starts the service.
// Never run: FreeBSD is cross-compiled only.
type RCD struct {
	Dir string // ~/.config/plexus
	run runner
}

const rcdSystemDir = "/usr/local/etc/rc.d"

func rcdUserDir(config string) string { return filepath.Join(config, "plexus") }

func (m *RCD) path() string {
	if os.Geteuid() == 0 {
		return filepath.Join(rcdSystemDir, Name)
	}
	return filepath.Join(m.Dir, "rc.d", Name)
}

// Install writes the script, and as root enables and starts it.
func (m *RCD) Install(ctx context.Context, s Spec) (Result, error) {
	script, err := RCScript(s)
	if err != nil {
		return Result{}, err
	}
	p := m.path()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return Result{}, err
	}
	if err := atomicfile.WriteFile(p, []byte(script), 0o755); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", p, err)
	}
	r := Result{Path: p, Logs: "/var/log/messages (syslog, tag plexus)"}
	todo := []string{"sysrc plexus_enable=YES plexus_user=" + shellQuote(s.User), "service plexus start"}
	if os.Geteuid() != 0 {
		r.Todo = append([]string{"install -m 555 " + shellQuote(p) + " " + rcdSystemDir + "/" + Name}, todo...)
		r.Message = "wrote " + p + "; rc.d scripts are the system's, so as root run the commands below"
		return r, nil
	}
	for _, c := range [][]string{{"sysrc", "plexus_enable=YES", "plexus_user=" + s.User}, {"service", Name, "start"}} {
		if _, err := m.run(ctx, c[0], c[1:]...); err != nil {
			r.Todo = todo
			return r, fmt.Errorf("wrote %s, but %w", p, err)
		}
	}
	r.Started = true
	r.Message = "installed " + p + ": rc starts the daemon at boot and daemon(8) restarts it if it exits"
	return r, nil
}

// Uninstall stops the service and removes the script (as root), or says
// what root must run.
func (m *RCD) Uninstall(ctx context.Context) (Result, error) {
	p := m.path()
	r := Result{Path: p}
	if os.Geteuid() == 0 {
		m.run(ctx, "service", Name, "stop")
		m.run(ctx, "sysrc", "-x", "plexus_enable", "plexus_user")
		r.Started = true
	} else {
		r.Todo = []string{"service plexus stop", "sysrc -x plexus_enable plexus_user", "rm " + rcdSystemDir + "/" + Name}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	r.Message = "removed " + p
	return r, nil
}

// Status asks rc about the service.
func (m *RCD) Status(ctx context.Context) (Status, error) {
	st := Status{Path: filepath.Join(rcdSystemDir, Name), Logs: "/var/log/messages"}
	if _, err := os.Stat(st.Path); err != nil {
		st.Message = "not installed in " + rcdSystemDir + ": run `plexus service install`"
		return st, nil
	}
	st.Installed = true
	out, _ := m.run(ctx, "service", Name, "status")
	st.State = firstLine(out)
	st.Message = "installed at " + st.Path
	return st, nil
}
