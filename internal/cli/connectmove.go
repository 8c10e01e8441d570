package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/clientconf"
)

// offerMove finds the client's own entries that Plexus now serves as they
// are (an import of the same file changes nothing, every secret of theirs
// already stored), and offers to take them out of the client's file, so
// that the user has one source of truth and no secret left inline. With
// yes it does without asking; it returns the entries taken out of the plan.
func (a *app) offerMove(cmd *cobra.Command, plan *clientconf.Plan, scope string, yes, dryRun bool) []string {
	served := a.servedByPlexus(cmd, plan, scope)
	if len(served) == 0 {
		return nil
	}
	list := strings.Join(served, ", ")
	switch {
	case yes || dryRun:
	case !stdinInteractive(a):
		a.progressf("Plexus serves %s of %s now: `plexus connect %s --yes` takes them out of %s (their secrets stay in Plexus; `plexus disconnect %s` puts them back)",
			sanitize(list), plan.Title, plan.Client, sanitize(plan.Path), plan.Client)
		return nil
	default:
		q := fmt.Sprintf("Plexus serves %s now. Take them out of %s, so that %s reaches them through Plexus alone and no secret stays in its file? (`plexus disconnect %s` puts them back)",
			sanitize(list), sanitize(plan.Path), plan.Title, plan.Client)
		if err := a.confirm(false, q, "taken out"); err != nil {
			a.progressf("%s keeps its own entries for %s", plan.Title, sanitize(list))
			return nil
		}
	}
	if err := plan.Then(func(_, edited []byte) ([]byte, error) { return clientconf.Remove(plan.Client, edited, served) }); err != nil {
		a.warnf("%s: its entries stay: %s", plan.Title, oneLine(err.Error()))
		return nil
	}
	return served
}

// servedByPlexus asks the daemon what importing the client's file would
// change: an entry it would leave unchanged, with its secrets already
// stored, is served by Plexus as the client has it.
func (a *app) servedByPlexus(cmd *cobra.Command, plan *clientconf.Plan, scope string) []string {
	if !plan.Exists {
		return nil
	}
	own, err := clientconf.Servers(plan.Client, plan.Before)
	if err != nil || len(own) == 0 {
		return nil
	}
	c, err := a.client()
	if err != nil {
		return nil
	}
	dialect := plan.Client
	if plan.Client == "claude" && scope == clientconf.ScopeProject {
		dialect = "claude-project"
	}
	res, err := c.Import(cmd.Context(), apitype.ImportRequest{Dialect: dialect, Source: plan.Path, Content: string(plan.Before), DryRun: true})
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range res.Entries {
		if e.Result != apitype.ImportUnchanged || !slices.Contains(own, e.Original) || slices.ContainsFunc(e.Secrets, func(s string) bool { return slices.Contains(res.SecretsSet, s) }) {
			continue
		}
		out = append(out, e.Original)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// recordMove keeps, beside the client's file, what connect took out of it
// (to put back on disconnect), or forgets it once disconnect put it back.
func (a *app) recordMove(plan *clientconf.Plan, client string, moved *clientconf.Moved, moving []string, connect bool) error {
	switch {
	case !connect && moved != nil:
		return clientconf.ForgetMoved(plan.Path)
	case connect && len(moving) > 0:
		// plan.Before is the text the write replaced (a client's newer one,
		// if it wrote meanwhile).
		m := clientconf.Moved{Client: client, Names: moving, Before: string(plan.Before), After: string(plan.After)}
		if moved != nil {
			// Moved again, later: the file before the first move is the one
			// a disconnect gives back.
			m.Before = moved.Before
			m.Names = slices.Compact(slices.Sorted(slices.Values(append(moved.Names, moving...))))
		}
		return clientconf.WriteMoved(plan.Path, m)
	}
	return nil
}
