package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

func (a *app) logsCommand() *cobra.Command {
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a server's stderr, or follow it",
		Long: `Print the last lines (at most 200) that a server wrote to stderr, kept across
its restarts, with secrets redacted.

With -f, keep following: new lines go to stdout as they come, and the
server's changes of state (a crash, a restart) to stderr as
"-- NAME is STATE". Following ends when interrupted, or when the server is
removed.

--json prints {"server", "lines", "nextSeq"}. With -f it prints one event per
line instead (NDJSON, as ` + "`plexus events --json`" + ` does), starting with the
lines already written, as "stderr" events with seq 0.`,
		Example: `  plexus logs docs
  plexus logs docs -f
  plexus logs docs -f --json | jq -r 'select(.type == "stderr") | .line'`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if follow {
				return a.followLogs(cmd, c, args[0], asJSON)
			}
			ll, err := c.Logs(cmd.Context(), args[0])
			if err != nil {
				return serverNotFound(fmt.Errorf("reading the stderr of %s: %w", args[0], err))
			}
			if asJSON {
				if ll.Lines == nil {
					ll.Lines = []string{}
				}
				return printJSON(a.stdout(), ll)
			}
			return writeLogLines(a.stdout(), ll.Lines)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines, and changes of state to stderr, until interrupted")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lines as JSON; with -f, one event per line")
	return cmd
}

// followLogs prints the stderr lines of server name, then follows them.
//
// The event stream is opened before the lines are read, so that a line
// written in between is in one or the other, never lost; the events that
// LogLines.NextSeq says the answer holds already are skipped.
func (a *app) followLogs(cmd *cobra.Command, c *client.Client, name string, asJSON bool) error {
	ctx := cmd.Context()
	stream, err := c.Events(ctx)
	if err != nil {
		return stoppedIsSuccess(cmd, eventsUnsupported(err))
	}
	defer stream.Close()
	ll, err := c.Logs(ctx, name)
	if err != nil {
		return stoppedIsSuccess(cmd, serverNotFound(fmt.Errorf("reading the stderr of %s: %w", name, err)))
	}

	enc := ndjson(a.stdout())
	if asJSON {
		for _, line := range ll.Lines {
			if err := enc.Encode(apitype.Event{Type: apitype.EventStderr, Server: name, Line: line}); err != nil {
				return err
			}
		}
	} else if err := writeLogLines(a.stdout(), ll.Lines); err != nil {
		return err
	}

	for {
		ev, err := stream.Next()
		if err != nil {
			return followEnd(cmd, err)
		}
		if ev.Server != name || (ev.Type == apitype.EventStderr && ev.LineSeq < ll.NextSeq) {
			continue
		}
		if asJSON {
			err = enc.Encode(ev)
		} else {
			err = a.writeFollowed(ev)
		}
		if err != nil {
			return err
		}
		if ev.Type == apitype.EventServerRemoved {
			fmt.Fprintf(a.stderr(), "-- %s was removed: nothing more to follow\n", oneLine(name))
			return nil
		}
	}
}

// writeFollowed prints one event about the followed server for people:
// its lines to stdout, its changes of state to stderr, apart from the
// lines so that `plexus logs -f NAME > file` keeps only what it wrote.
func (a *app) writeFollowed(ev apitype.Event) error {
	switch ev.Type {
	case apitype.EventStderr:
		_, err := fmt.Fprintln(a.stdout(), logLine(ev.Line))
		return err
	case apitype.EventServer:
		if ev.Status != nil {
			fmt.Fprintf(a.stderr(), "-- %s is %s\n", oneLine(ev.Server), stateDetail(*ev.Status, a.eventTime(ev)))
		}
	}
	return nil
}

func (a *app) eventsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Follow what happens in the daemon",
		Long: `Print the daemon's events as they happen, until interrupted: servers changing
state, added or removed, the catalog of tools changing, and every line that a
server writes to stderr.

--json prints each event as one JSON object per line (NDJSON) with the fields
seq, type (server, server_removed, catalog, stderr or held), time, and as the
type calls for, server, status, line, and for held the tools held back or the
approval the server waits for.`,
		Example: `  plexus events
  plexus events --json | jq -c 'select(.type == "server") | {server, state: .status.state}'`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			stream, err := c.Events(cmd.Context())
			if err != nil {
				return stoppedIsSuccess(cmd, eventsUnsupported(err))
			}
			defer stream.Close()
			enc := ndjson(a.stdout())
			for {
				ev, err := stream.Next()
				if err != nil {
					return followEnd(cmd, err)
				}
				if asJSON {
					err = enc.Encode(ev)
				} else {
					_, err = fmt.Fprintln(a.stdout(), a.describeEvent(ev))
				}
				if err != nil {
					return err
				}
			}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per event and line (NDJSON)")
	return cmd
}

// describeEvent renders an event as one line for people, stamped with the
// local time it happened: "12:04:05 server docs: ready, 4 tools".
func (a *app) describeEvent(ev apitype.Event) string {
	at := a.eventTime(ev)
	stamp := at.Local().Format(time.TimeOnly)
	server := oneLine(ev.Server)
	switch ev.Type {
	case apitype.EventServer:
		if ev.Status == nil {
			return fmt.Sprintf("%s server %s changed", stamp, server)
		}
		return fmt.Sprintf("%s server %s: %s", stamp, server, stateDetail(*ev.Status, at))
	case apitype.EventServerRemoved:
		return fmt.Sprintf("%s server %s removed", stamp, server)
	case apitype.EventCatalog:
		if server != "" {
			return fmt.Sprintf("%s catalog changed (%s)", stamp, server)
		}
		return stamp + " catalog changed"
	case apitype.EventStderr:
		return fmt.Sprintf("%s %s stderr: %s", stamp, server, logLine(ev.Line))
	case apitype.EventHeld:
		return fmt.Sprintf("%s held %s: %s", stamp, server, heldEventDetail(ev))
	case apitype.EventSettingsFile:
		switch f := ev.SettingsFile; {
		case f == nil:
			return stamp + " settings file: no hand edit waits any more"
		case len(f.Problems) > 0:
			return fmt.Sprintf("%s settings file changed by hand, not applied: %s", stamp, oneLine(strings.Join(f.Problems, "; ")))
		}
		return stamp + " settings file changed by hand: `plexus reload` applies it"
	}
	// A type newer than this program: still a line, not a failure.
	return strings.TrimRight(fmt.Sprintf("%s %s %s", stamp, oneLine(ev.Type), server), " ")
}

// eventTime is when ev happened; the time of reading it for an event that
// does not say.
func (a *app) eventTime(ev apitype.Event) time.Time {
	if ev.Time.IsZero() {
		return a.now()
	}
	return ev.Time
}

// writeLogLines prints stderr lines one to a line.
func writeLogLines(w io.Writer, lines []string) error {
	var b strings.Builder
	for _, line := range lines {
		b.WriteString(logLine(line))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ndjson returns an encoder of one compact JSON value per line, the --json
// form of a stream: each line can be read as soon as it is written.
func ndjson(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// eventsUnsupported explains a daemon that has no event stream: one older
// than this program.
func eventsUnsupported(err error) error {
	return withRemedy(err, apitype.CodeNotFound, "this daemon has no event stream: it is older than this plexus; restart it with `plexus daemon`")
}

// followEnd turns the end of following into the command's result: an
// interrupt is the normal way to stop; the daemon going away is not.
func followEnd(cmd *cobra.Command, err error) error {
	if err = stoppedIsSuccess(cmd, err); err == nil {
		return nil
	}
	if errors.Is(err, client.ErrEventStreamClosed) {
		return fmt.Errorf("%w: the daemon may have stopped; see `plexus status`", err)
	}
	return err
}
