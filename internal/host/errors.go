package host

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/sandbox"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// NotFoundError says a named thing does not exist.
type NotFoundError struct {
	What string // "server", "tool", "secret"
	Name string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("no %s named %q", e.What, e.Name) }

// ExistsError says a server to add already exists.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string { return fmt.Sprintf("a server named %q already exists", e.Name) }

// StartError says a server could not be started, so the save that needed it
// was refused and the previous settings kept (R-API-2) — or, for a restart,
// that the server's new instance did not come up and the one before it
// runs on.
type StartError struct {
	Server string
	Err    error
	// Restart is set when the start was a restart, not a save;
	// NotRunning when the server it was to replace was not running either.
	Restart, NotRunning bool
	// Stderr holds the server's last stderr lines, secrets redacted.
	Stderr []string
}

// Error says why; the upstream error already carries the last few stderr
// lines, and Stderr has more for status views.
func (e *StartError) Error() string {
	what := "could not be started, so nothing was saved"
	switch {
	case e.Restart && e.NotRunning:
		what = "could not be restarted; it is still not running"
	case e.Restart:
		what = "could not be restarted; it runs on as it was"
	}
	var ce *upstream.ConnectError
	if errors.As(e.Err, &ce) {
		// ConnectError names the server too; say it once.
		msg := fmt.Sprintf("server %s %s: %s: %v", e.Server, what, ce.Phase, ce.Err)
		if len(ce.Stderr) > 0 {
			msg += fmt.Sprintf(" (stderr: %q)", strings.Join(ce.Stderr, " | "))
		}
		return msg
	}
	return fmt.Sprintf("server %s %s: %v", e.Server, what, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// SandboxHint is the flag that would have allowed what a sandboxed
// server's sandbox refused last, as advice; "" when its stderr holds no
// such line of Plexus's.
func (e *StartError) SandboxHint() string {
	lines := e.Stderr
	var ce *upstream.ConnectError
	if errors.As(e.Err, &ce) {
		lines = append(slices.Clone(lines), ce.Stderr...)
	}
	return sandbox.Remedy(e.Server, lines)
}
