package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func (a *app) daemonCommand() *cobra.Command {
	var listen, peerListen, peerAdvertise string
	var stopDelay time.Duration
	var metricsListen string
	var so StoreOptions
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the daemon in the foreground",
		Long: `Run the Plexus daemon in the foreground until interrupted. The daemon owns
$PLEXUS_HOME (default ~/.plexus): the settings, the secrets and the servers.
It answers on the unix socket $PLEXUS_HOME/plexus.sock, and on a loopback TCP
address (default 127.0.0.1:7780) for the web page (` + "`plexus ui`" + `) and the
token-guarded endpoints: /metrics.

With --store-url-file FILE (or the URL in PLEXUS_STORE_URL) the settings,
secrets, tokens and pins are kept in that PostgreSQL database instead,
shared with the other replicas of a team and sealed under the key of
--store-key-file (or PLEXUS_STORE_KEY); both variables are removed from
the daemon's environment once read (docs/team.md). With --peer-listen the
replicas reach each other on an internal channel, so that a client's
session is served wherever its requests land.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.env.RunDaemon == nil {
				return fmt.Errorf("the daemon: %w", errNoRunner)
			}
			return stoppedIsSuccess(cmd, a.env.RunDaemon(cmd.Context(), DaemonOptions{Listen: listen, Store: so,
				PeerListen: peerListen, PeerAdvertise: peerAdvertise, StopDelay: stopDelay, MetricsListen: metricsListen}))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "loopback `ADDRESS` for the web page and the token-guarded HTTP endpoints (default 127.0.0.1:7780; off for none); in team mode also a pod's address, which serves only the face, its metadata and /healthz, /readyz")
	cmd.Flags().StringVar(&so.URL, "store", "", "keep the settings, secrets, tokens and pins in the PostgreSQL database at `URL` (postgres://…), shared with other replicas; a URL with a password is deprecated here (every process reads a command line): use --store-url-file or PLEXUS_STORE_URL")
	cmd.Flags().StringVar(&so.URLFile, "store-url-file", "", "`FILE` holding the URL of --store (or give it in PLEXUS_STORE_URL)")
	cmd.Flags().StringVar(&so.Bootstrap, "store-bootstrap", "", "settings `FILE` (extensions.json) written to a database store that has none yet")
	storeKeyFlags(cmd, &so)
	cmd.Flags().StringVar(&peerListen, "peer-listen", "", "with --store: listen on `ADDRESS` for the other replicas (the internal channel, authenticated by the store's key)")
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", "also serve GET /metrics alone, without a token, on `ADDRESS` (for a scraper; beyond loopback in team mode only)")
	cmd.Flags().DurationVar(&stopDelay, "stop-delay", 0, "on SIGTERM, stay out of a balancer's rotation but serving for `DURATION` before stopping (a replica's preStop delay: its endpoint leaves the Service meanwhile)")
	cmd.Flags().StringVar(&peerAdvertise, "peer-advertise", "", "with --peer-listen: the `HOST:PORT` the other replicas dial (default the --peer-listen address)")
	return cmd
}

// stoppedIsSuccess treats the end of a foreground service by a signal (the
// context canceled by main) as the normal way for it to stop.
func stoppedIsSuccess(cmd *cobra.Command, err error) error {
	if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (a *app) exampleServerCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "example-server",
		Short: "Run the bundled example MCP server on stdio",
		Long: `Run a small example MCP server on stdin/stdout, to try Plexus with:
  plexus add example -- plexus example-server`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.env.RunExampleServer == nil {
				return fmt.Errorf("the example server: %w", errNoRunner)
			}
			return stoppedIsSuccess(cmd, a.env.RunExampleServer(cmd.Context()))
		},
	}
}

func (a *app) statusCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon and its servers",
		Long: `Show the daemon and the state of its servers. Each server that failed, waits
to be restarted or is crash-looping is detailed below the table: its last
error, the exit code or HTTP status behind it, how often it was restarted and
its last lines on stderr.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			st, err := c.Status(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if st.Servers == nil {
					st.Servers = []apitype.ServerStatus{}
				}
				return printJSON(a.stdout(), withAddresses(st, c.Home()))
			}
			now := a.now()
			uptime := "unknown"
			if !st.StartedAt.IsZero() {
				uptime = now.Sub(st.StartedAt).Truncate(time.Second).String()
			}
			fmt.Fprintf(a.stdout(), "daemon    running, pid %d, version %s\nhome      %s\nuptime    %s\nrevision  %d\n",
				st.PID, sanitize(st.Version), sanitize(st.Home), uptime, st.Revision)
			for i, line := range st.Sandbox {
				key := ""
				if i == 0 {
					key = "sandbox"
				}
				fmt.Fprintf(a.stdout(), "%-9s %s\n", key, sanitize(line))
			}
			if f := st.SettingsFile; f != nil {
				what := "changed by hand, not applied: `plexus reload` applies it, `plexus reload --discard` drops it"
				if len(f.Problems) > 0 {
					what = "changed by hand and cannot be applied: " + strings.Join(f.Problems, "; ")
				}
				fmt.Fprintf(a.stdout(), "%-9s %s %s\n", "settings", sanitize(f.Path), sanitize(what))
			}
			if len(st.Servers) == 0 {
				fmt.Fprintln(a.stdout(), "\nno servers: add one with `plexus add`")
				return nil
			}
			fmt.Fprintln(a.stdout())
			if err := serverTable(st.Servers, now).write(a.stdout(), a.outputWidth()); err != nil {
				return err
			}
			return writeTroubles(a.stdout(), st.Servers, now)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// statusJSON is `plexus status --json`: the daemon's status, with where a
// script reaches the daemon — its MCP face, its metrics and the token they
// take — so that no script or document hard-codes the port or the home.
type statusJSON struct {
	*apitype.Status
	// MCPURL is the face over HTTP on the loopback address; MetricsURL
	// its Prometheus metrics. Both "" when the daemon listens on none.
	MCPURL     string `json:"mcpURL,omitempty"`
	MetricsURL string `json:"metricsURL,omitempty"`
	// TokenFile holds the bearer token those URLs take.
	TokenFile string `json:"tokenFile"`
}

func withAddresses(st *apitype.Status, home string) statusJSON {
	out := statusJSON{Status: st, TokenFile: filepath.Join(home, "token")}
	if st.HTTPAddr != "" {
		out.MCPURL = "http://" + st.HTTPAddr + "/mcp"
		out.MetricsURL = "http://" + st.HTTPAddr + "/metrics"
	}
	return out
}

func (a *app) lsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the servers with their state",
		Long: `List the configured servers: state, type, number of tools and the last error.
A server waiting to be restarted shows the time left, as in "backoff 4s"; one
parked after failing again and again shows "crash-looping 9m" until its next
try. ` + "`plexus restart NAME`" + ` tries at once; ` + "`plexus status`" + ` and
` + "`plexus logs NAME`" + ` tell why it failed.

--json prints an array of server statuses (name, type, enabled, state, tools,
lastError, restarts, nextTryAt, crashLooping, ...).`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			sl, err := c.Servers(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if sl.Servers == nil {
					sl.Servers = []apitype.ServerStatus{}
				}
				return printJSON(a.stdout(), sl.Servers)
			}
			if len(sl.Servers) == 0 {
				a.progressf("no servers: add one with `plexus add NAME URL` or `plexus add NAME -- COMMAND [ARGS...]`")
				return nil
			}
			if err := serverTable(sl.Servers, a.now()).write(a.stdout(), a.outputWidth()); err != nil {
				return err
			}
			a.noteExternalCallOff(cmd.Context(), c)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the servers as a JSON array")
	return cmd
}

func (a *app) rmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a server and its stored credentials",
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if _, err := c.DeleteServer(cmd.Context(), args[0], 0); err != nil {
				return serverNotFound(fmt.Errorf("removing %s: %w", args[0], err))
			}
			return a.done(cmd, okResult{OK: true, Server: args[0]}, func() { fmt.Fprintf(a.stdout(), "removed %s\n", args[0]) })
		},
	}
}

// enableCommand makes `enable` (on) or `disable`.
func (a *app) enableCommand(on bool) *cobra.Command {
	verb, short := "disable", "Switch a server off: stop it and hide its tools"
	if on {
		verb, short = "enable", "Switch a server on: start it and offer its tools"
	}
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			stop := func() {}
			if on {
				stop = a.watchStart(cmd.Context(), c, args[0], "starting "+args[0])
			}
			wr, err := c.SetEnabled(cmd.Context(), args[0], on)
			stop()
			if err != nil {
				err = startTimedOut(err, args[0], false)
				return serverNotFound(fmt.Errorf("%s %s: %w", verb, args[0], err))
			}
			word := verb + "d"
			if wr.Server != nil {
				a.warnAll(wr.Server.Warnings)
			}
			return a.done(cmd, wr, func() { fmt.Fprintf(a.stdout(), "%s %s%s\n", word, args[0], summarySuffix(wr.Server)) })
		},
	}
}

func (a *app) restartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a server now",
		Long: `Stop a server and start it again now, without waiting for its next automatic
try: the way out of a crash loop once its cause is fixed. Prints the state the
server reached.`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			stop := a.watchStart(cmd.Context(), c, args[0], "restarting "+args[0])
			wr, err := c.Restart(cmd.Context(), args[0])
			stop()
			if err != nil {
				return serverNotFound(fmt.Errorf("restarting %s: %w", args[0], startTimedOut(err, args[0], false)))
			}
			if wr.Server != nil {
				a.warnAll(wr.Server.Warnings)
			}
			return a.done(cmd, wr, func() { fmt.Fprintf(a.stdout(), "restarted %s%s\n", args[0], summarySuffix(wr.Server)) })
		},
	}
}

func (a *app) reloadCommand() *cobra.Command {
	var discard bool
	cmd := &cobra.Command{
		Use:   "reload",
		Short: "Apply the settings file after editing it by hand",
		Long: `Make the daemon read $PLEXUS_HOME/extensions.json again and apply it in one
step: added and changed servers are started, removed ones stopped, unchanged
ones kept running. If the file is invalid, every problem is listed and nothing
changes: the servers keep running with the settings they had.

Until a hand edit is applied, every other change (plexus add, the terminal UI,
the web page, an agent) is refused rather than saved over it. With --discard
the file is put back as the daemon last read or wrote it instead; the edited
file is kept (` + "`plexus revisions`" + `).

A file edited by hand is not an approval: a server it adds, or whose command,
args, environment names or URL it changes, is not started until you approve it
with ` + "`plexus approve NAME`" + `.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if discard {
				wr, err := c.DiscardEdits(cmd.Context())
				if err != nil {
					return fmt.Errorf("discarding the hand edit: %w", err)
				}
				fmt.Fprintf(a.stdout(), "discarded the hand edit; the settings are at revision %d (the edited file is kept: `plexus revisions`)\n", wr.Revision)
				return nil
			}
			stop := a.progressAfter("applying the settings…")
			wr, err := c.Reload(cmd.Context())
			stop()
			if err != nil {
				return withRemedy(fmt.Errorf("reloading the settings: %w", err), apitype.CodeBadRequest,
					"correct "+filepath.Join(c.Home(), "extensions.json")+
						" and run `plexus reload` again; until then the servers keep the settings they had")
			}
			return a.done(cmd, wr, func() { fmt.Fprintf(a.stdout(), "reloaded (revision %d)\n", wr.Revision) })
		},
	}
	cmd.Flags().BoolVar(&discard, "discard", false, "put the file back as the daemon last read or wrote it, keeping the edited one as a revision")
	return cmd
}
