// Command plexus is the Plexus MCP host: the daemon, its CLI, and the
// built-in example server, in one binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/cmd/plexus/internal/shimentry"
	"github.com/plexus-mcp/plexus/internal/cli"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/conformanceclient"
	"github.com/plexus-mcp/plexus/internal/daemon"
	"github.com/plexus-mcp/plexus/internal/exampleserver"
	"github.com/plexus-mcp/plexus/internal/sandbox"
)

func main() {
	// The hidden subcommand the daemon runs in front of every stdio
	// server, shimentry.Command, never reaches main: shimentry runs it
	// while the binary is being initialised.
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == conformanceclient.Command {
		os.Exit(conformanceclient.Main(os.Args[2:], os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli.Run(ctx, os.Args[1:], cli.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		RunDaemon: func(ctx context.Context, o cli.DaemonOptions) error {
			home, err := client.Home()
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding the plexus binary for the process shim: %w", err)
			}
			steady := 0
			if os.Getenv("GOMAXPROCS") == "" {
				// Once its servers have started, one thread runs the
				// daemon's Go code (daemon.Options.SteadyProcs). The
				// environment still decides.
				steady = 1
			}
			return daemon.Run(ctx, daemon.Options{Home: home, Shim: []string{exe, shimentry.Command}, Stderr: os.Stderr, Listen: o.Listen, SteadyProcs: steady, StopDelay: o.StopDelay, MetricsListen: o.MetricsListen,
				Store: daemon.StoreOptions(o.Store), Peer: daemon.PeerOptions{Listen: o.PeerListen, Advertise: o.PeerAdvertise}})
		},
		MigrateStore: func(ctx context.Context, o cli.MigrateOptions) (string, error) {
			c, err := daemon.MigrateStore(ctx, o.From, o.To, daemon.StoreOptions(o.Keys), o.Force)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("copied %s and %d kept revisions; read back and verified", strings.Join(c.Docs, ", "), c.Revisions), nil
		},
		RunExampleServer: func(ctx context.Context) error {
			return exampleserver.Run(ctx, &mcp.StdioTransport{})
		},
	}))
}
