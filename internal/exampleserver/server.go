// Package exampleserver is the MCP server built into Plexus, so that the
// quickstart works offline and with nothing else installed: it gives a new
// user something to add, list and call before they configure a real server.
//
// Its tools are small but real, and chosen to show what Plexus does: echo and
// sha256 are deterministic (good for tests and demos), now fails cleanly on
// bad input, and sleep honours cancellation, so timeouts and cancel
// forwarding can be tried by hand. It also offers one resource and one
// prompt, so read_resource and get_prompt appear in the catalog.
package exampleserver

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Identity reported to clients.
const (
	serverName    = "plexus-example"
	serverVersion = "1.0.0"
)

// Run serves one MCP client on t until the client disconnects or ctx is
// done. It writes one line to stderr when it is ready, and nothing to stdout:
// over stdio, stdout carries the protocol.
func Run(ctx context.Context, t mcp.Transport) error {
	return run(ctx, t, options{log: os.Stderr})
}

// options are the seams tests need; Run uses only the log writer.
type options struct {
	log io.Writer
	// sleepReturned, if set, is called as each sleep call returns, with the
	// context's error if it was cancelled, so a test can tell that the
	// handler itself stopped and not only the client's wait.
	sleepReturned func(error)
}

func run(ctx context.Context, t mcp.Transport, o options) error {
	// One logger for the server and its tools: a handler serializes its
	// writes, two handlers on one writer would not.
	log := slog.New(slog.NewTextHandler(o.log, nil))
	s := newServer(o, log)
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	log.Info("plexus example server ready",
		"server", serverName, "version", serverVersion)

	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		ss.Close()
		<-done // the waiting goroutine is ours: do not leave it behind
		return ctx.Err()
	}
}

func newServer(o options, log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: serverName, Version: serverVersion}, nil)
	addTools(s, o, log)
	addReadme(s)
	addSummarize(s)
	return s
}
