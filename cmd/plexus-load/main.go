// Command plexus-load drives an MCP endpoint — a stdio command or a
// streamable HTTP URL — and measures it, or compares a stdio server reached
// directly with the same server through a Plexus daemon it starts. See
// docs/performance.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/plexus-mcp/plexus/internal/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(loadtest.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
