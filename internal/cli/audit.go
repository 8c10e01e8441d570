package cli

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func (a *app) auditCommand() *cobra.Command {
	var f struct {
		kind, server, tool, member, outcome, since string
		limit                                      int
		follow, asJSON, team                       bool
	}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the audit log: calls, reads, logins, decisions, settings changes",
		Long: `Print the newest records of the audit log, oldest first: every tool call,
resource read, prompt get, login, approval or policy decision and settings
change — when, who (team member, client, profile, session), what (server,
tool, Plexus name), outcome, duration and sizes. Arguments and results are
recorded only for a server with "auditPayloads": true, secrets redacted.

The filters combine: --server, --tool (the server's or the Plexus name),
--member, --outcome (ok, tool_error, timeout, denied, …), --kind
(tools/call, resources/read, prompts/get, login, approval, policy,
settings) and --since (a time, 2026-12-06T21:00:00Z, or a duration back
from now, 10m).

With --team (a replica of a database store), print every replica's records
from the database, each replica's chain of records verified with the key
derived from the store's key: a record forged, altered or erased by someone
without it is named in a warning.

With -f, keep printing new records as they are written, until interrupted.
--json prints one record per line (NDJSON) with the fields of the log file
($PLEXUS_HOME/audit.jsonl).`,
		Example: `  plexus audit --since 1h
  plexus audit --server github --outcome tool_error
  plexus audit -f --member ann@example.com --json | jq -c '{time, tool, outcome}'`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"kind": f.kind, "server": f.server, "tool": f.tool, "member": f.member, "outcome": f.outcome, "since": f.since} {
				if v != "" {
					q.Set(k, v)
				}
			}
			ctx := cmd.Context()
			var stream interface {
				Next() (apitype.AuditRecord, error)
				Close() error
			}
			if f.follow {
				s, err := c.FollowAudit(ctx, q)
				if err != nil {
					return stoppedIsSuccess(cmd, fmt.Errorf("following the audit log: %w", err))
				}
				defer s.Close()
				stream = s
			}
			q.Set("limit", strconv.Itoa(f.limit))
			if f.team {
				q.Set("team", "1")
			}
			recs, err := c.Audit(ctx, q)
			if err != nil {
				return stoppedIsSuccess(cmd, fmt.Errorf("reading the audit log: %w", err))
			}
			if recs.Off {
				fmt.Fprintln(a.stderr(), "the audit log is off (mcp.audit.enabled is false)")
			}
			for _, p := range recs.Problems {
				fmt.Fprintln(a.stderr(), "warning: the team's audit log does not verify: "+oneLine(p))
			}
			if recs.Dropped > 0 {
				fmt.Fprintf(a.stderr(), "warning: %d records were lost since the daemon started (its queue was full or the disk failed)\n", recs.Dropped)
			}
			enc := ndjson(a.stdout())
			print := func(r apitype.AuditRecord) error {
				if f.asJSON {
					return enc.Encode(r)
				}
				return writeAuditRecord(a.stdout(), r)
			}
			seen := map[string]bool{}
			for _, r := range recs.Records {
				seen[auditKey(r)] = true
				if err := print(r); err != nil {
					return err
				}
			}
			if stream == nil {
				return nil
			}
			for {
				r, err := stream.Next()
				if err != nil {
					return followEnd(cmd, err)
				}
				if seen[auditKey(r)] {
					continue // written between the stream's opening and the read
				}
				if err := print(r); err != nil {
					return err
				}
			}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", "", "only records of this server")
	fl.StringVar(&f.tool, "tool", "", "only records of this tool (the server's name or the Plexus name)")
	fl.StringVar(&f.member, "member", "", "only records of this team member")
	fl.StringVar(&f.outcome, "outcome", "", "only records with this outcome (ok, tool_error, timeout, denied, …)")
	fl.StringVar(&f.kind, "kind", "", "only records of this kind (tools/call, resources/read, prompts/get, login, approval, policy, settings)")
	fl.StringVar(&f.since, "since", "", "only records from this time (RFC 3339) or this long ago (10m, 2h)")
	fl.IntVarP(&f.limit, "limit", "n", 100, "print at most this many of the newest records")
	fl.BoolVarP(&f.follow, "follow", "f", false, "keep printing new records until interrupted")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON record per line")
	fl.BoolVar(&f.team, "team", false, "every replica's records, from the team's database store, their chains verified")
	return cmd
}

// auditKey identifies a record well enough to skip one printed twice.
func auditKey(r apitype.AuditRecord) string {
	return r.Time.Format(time.RFC3339Nano) + "\x00" + r.Kind + "\x00" + r.Session + "\x00" + r.Name + r.Tool + "\x00" + r.Outcome
}

// writeAuditRecord prints one record for people, on one line.
func writeAuditRecord(w io.Writer, r apitype.AuditRecord) error {
	var b strings.Builder
	b.WriteString(r.Time.Local().Format("2006-01-02 15:04:05.000"))
	fmt.Fprintf(&b, "  %-14s %-10s", r.Kind, r.Outcome)
	what := r.Server
	if r.Tool != "" {
		what += " " + r.Tool
	}
	if r.Name != "" && r.Name != r.Tool {
		what += " (" + r.Name + ")"
	}
	if what != "" {
		b.WriteString("  " + what)
	}
	if r.Ms > 0 {
		fmt.Fprintf(&b, "  %.1f ms", r.Ms)
	}
	for _, kv := range [][2]string{{"member", r.Member}, {"client", strings.TrimSuffix(r.Client+"/"+r.ClientVersion, "/")}, {"profile", r.Profile}, {"replica", r.Replica}, {"why", r.Reason}} {
		if kv[1] != "" {
			b.WriteString("  " + kv[0] + "=" + kv[1])
		}
	}
	if r.ArgBytes > 0 || r.ResultBytes > 0 {
		fmt.Fprintf(&b, "  in %d B out %d B", r.ArgBytes, r.ResultBytes)
	}
	_, err := fmt.Fprintln(w, oneLine(b.String()))
	return err
}
