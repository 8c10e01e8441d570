package pgstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plexus-mcp/plexus/internal/docstore"
)

// ErrUnreachable marks an operation that failed because the database
// could not be reached (refused, stalled past the operation's time, or
// the connection lost), as opposed to one the database refused.
var ErrUnreachable = docstore.ErrUnreachable

// unreachable reports whether err says the database could not be
// reached, rather than that it answered with an error.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &pe):
		// Class 08, connection exceptions; 57P01-03, the server shutting
		// down or starting.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err), errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	}
	return strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "conn busy")
}

// writeFailed wraps a failed write of name. One the database could not be
// reached for says whether it may have been made: committed is true when
// the failure came while its COMMIT was under way, so that its outcome is
// unknown; before that, nothing was changed.
func writeFailed(name string, err error, committing bool) error {
	var stale *docstore.StaleError
	if errors.As(err, &stale) {
		return stale
	}
	if unreachable(err) {
		return &docstore.UnreachableError{Name: name, Unknown: committing, Err: err}
	}
	return reach("writing "+name+" to the store", err)
}
