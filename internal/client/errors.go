package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// ErrDaemonNotRunning is wrapped by the error of any call made while no
// daemon listens on the socket.
var ErrDaemonNotRunning = errors.New("the daemon is not running")

// APIError is an error answer of the daemon: every non-2xx status.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Body is the daemon's description of the error.
	Body apitype.ErrorBody
}

// Error returns the message followed by each validation problem on its own
// line. The hint is left to the front end, which may have a better remedy for
// its own context.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Body.Message)
	for _, p := range e.Body.Problems {
		b.WriteString("\n  ")
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// notRunningError is a failed dial that means nobody serves the socket.
type notRunningError struct {
	socket      string
	homeFromEnv bool
	err         error
}

func (e *notRunningError) Error() string {
	msg := ErrDaemonNotRunning.Error() + ": start it with `plexus daemon`"
	if e.homeFromEnv {
		// A daemon started without the same PLEXUS_HOME listens elsewhere.
		msg += fmt.Sprintf(" (PLEXUS_HOME is set: the daemon must run with the same PLEXUS_HOME; no daemon listens on %s)", e.socket)
	}
	return msg
}

// Unwrap exposes both the sentinel and the cause, so errors.Is matches
// ErrDaemonNotRunning as well as, say, syscall.ECONNREFUSED.
func (e *notRunningError) Unwrap() []error { return []error{ErrDaemonNotRunning, e.err} }

// dialFailure turns a failed connect to the socket into an error that says
// what to do.
func (c *Client) dialFailure(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOTDIR):
		// No socket file, or a stale one left by a daemon that died.
		return &notRunningError{socket: c.socket, homeFromEnv: c.homeFromEnv, err: err}
	case errors.Is(err, fs.ErrPermission):
		// The socket is 0600 in a 0700 directory (R-OWN-4): another user's
		// daemon, or a home directory created by another user (often sudo).
		return fmt.Errorf("permission denied on the daemon's socket %s (%w): run plexus as the user that runs the daemon, or set PLEXUS_HOME to a directory of your own", c.socket, err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("the daemon did not accept a connection on %s within %s (%w): it may be hung; restart it with `plexus daemon`", c.socket, dialTimeout, err)
	}
	return fmt.Errorf("connecting to the daemon on %s: %w", c.socket, err)
}
