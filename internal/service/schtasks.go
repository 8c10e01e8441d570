package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf16"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// Schtasks is the Manager of a per-user scheduled task, registered from
// Dir/plexus-task.xml with schtasks.exe. Never run: Windows is
// cross-compiled only.
type Schtasks struct {
	Dir string // %APPDATA%\Plexus
	run runner
}

const taskName = "Plexus"

func (m *Schtasks) path() string { return filepath.Join(m.Dir, "Plexus", "plexus-task.xml") }

// Install writes the task (UTF-16, as schtasks reads it), registers it,
// and starts it.
func (m *Schtasks) Install(ctx context.Context, s Spec) (Result, error) {
	x, err := TaskXML(s)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(filepath.Dir(m.path()), 0o700); err != nil {
		return Result{}, err
	}
	if err := atomicfile.WriteFile(m.path(), utf16LE(x), 0o600); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", m.path(), err)
	}
	r := Result{Path: m.path(), Logs: filepath.Join(s.Home, "logs.jsonl")}
	if _, err := m.run(ctx, "schtasks", "/Create", "/TN", taskName, "/XML", m.path(), "/F"); err != nil {
		return r, fmt.Errorf("wrote %s, but %w", m.path(), err)
	}
	m.run(ctx, "schtasks", "/Run", "/TN", taskName)
	r.Started = true
	r.Message = "installed the scheduled task " + taskName + ": it starts the daemon at logon and restarts it if it fails"
	if os.Getenv("PLEXUS_HOME") != "" {
		r.Todo = []string{`setx PLEXUS_HOME "` + s.Home + `"`}
		r.Message += "; a task has no environment of its own, so set PLEXUS_HOME for your account as below"
	}
	return r, nil
}

// Uninstall deletes the task.
func (m *Schtasks) Uninstall(ctx context.Context) (Result, error) {
	r := Result{Path: m.path()}
	m.run(ctx, "schtasks", "/End", "/TN", taskName)
	if _, err := m.run(ctx, "schtasks", "/Delete", "/TN", taskName, "/F"); err != nil {
		return r, err
	}
	if err := os.Remove(m.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	r.Started = true
	r.Message = "removed the scheduled task " + taskName
	return r, nil
}

// Status queries the task.
func (m *Schtasks) Status(ctx context.Context) (Status, error) {
	st := Status{Path: m.path()}
	out, err := m.run(ctx, "schtasks", "/Query", "/TN", taskName, "/FO", "LIST")
	if err != nil {
		st.Message = "not installed: run `plexus service install`"
		return st, nil
	}
	st.Installed, st.State = true, firstLine(out)
	st.Message = "the scheduled task " + taskName + " is registered"
	return st, nil
}

// utf16LE encodes s as UTF-16 little-endian with a byte-order mark.
func utf16LE(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2, 2+2*len(u))
	b[0], b[1] = 0xff, 0xfe
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return b
}
