package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/execpages"
	"github.com/plexus-mcp/plexus/internal/mcpbridge"
)

func (a *app) mcpCommand() *cobra.Command {
	var profile, listen string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Plexus as an MCP server on stdin/stdout, for editors and agents",
		Long: `Serve Plexus as an MCP server on stdin and stdout: register this command in
an editor or agent (claude mcp add plexus -- plexus mcp). It talks to the
running daemon, starting it if it is not running, and holds a session of its
own. It always offers plexus_status and plexus_snapshot; with
mcp.face.allowExternalCall on in extensions.json it also offers every
server's tools, resources and prompts, and tells the client when they
change. --profile picks a profile of extensions.json (its servers, naming
and meta-tools); the daemon serves the same at /mcp/NAME on its loopback
address.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := ensureDaemon(cmd.Context(), c, listen); err != nil {
				return err
			}
			return a.serveMCP(cmd.Context(), c, profile, listen)
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "serve this profile of extensions.json instead of the default")
	cmd.Flags().StringVar(&listen, "listen", "", "the loopback `ADDRESS` of the daemon this starts if none runs (plexus daemon --listen; default 127.0.0.1:7780)")
	return cmd
}

// ensureDaemon starts the daemon in the background if it is not running,
// the way gopls's forwarder does, on listen ("" for its default), and
// waits until it answers.
func ensureDaemon(ctx context.Context, c *client.Client, listen string) error {
	if _, err := c.Status(ctx); !errors.Is(err, client.ErrDaemonNotRunning) {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	args := []string{"daemon"}
	if listen != "" {
		args = append(args, "--listen", listen)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "PLEXUS_HOME="+c.Home())
	// Detached: it outlives this process and the editor's signals.
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	go cmd.Wait() // reaped if it exits while we live
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := c.Status(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the daemon did not come up: %w (see $PLEXUS_HOME/logs.jsonl)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (a *app) serveMCP(ctx context.Context, c *client.Client, profile, listen string) error {
	if os.Getenv("GOMAXPROCS") == "" {
		// The bridge only copies messages between pipes and a socket: on
		// one thread it spends less CPU a call than on more, which cost
		// wake-ups of threads on every hand-off, as the daemon's call
		// path does once settled (docs/performance.md).
		runtime.GOMAXPROCS(1)
	}
	url, hc := c.MCP(profile)
	b := &mcpbridge.Bridge{HTTP: hc, URL: url, Warn: a.warnf, Dial: c.Dial, Header: c.AuthHeader(), Reauth: c.RereadToken,
		// The daemon gone mid-session (restarted, crashed): start it again,
		// as at the bridge's start.
		Reconnect: func(ctx context.Context) error { return ensureDaemon(ctx, c, listen) },
		Quiet:     bridgeQuiet, QuietAfter: time.Second}
	return b.Run(ctx, a.env.Stdin, a.env.Stdout)
}

// bridgeQuiet gives back, once the bridge has been quiet for a second,
// what starting it and forwarding mapped and allocated: the garbage is
// collected and returned to the system at once, and the executable's
// pages touched only to start (the CLI, TUI and web page initialised with
// it) or to forward are unmapped (execpages.Shed). An editor's bridge
// waits between calls most of its life.
func bridgeQuiet() {
	debug.FreeOSMemory()
	execpages.Shed()
}
