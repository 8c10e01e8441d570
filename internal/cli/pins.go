package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/cmdline"
)

// A person decides (R-CAT-6): accept and approve first show what changed,
// in full and with anything invisible made visible, then ask at a terminal.
// Without a terminal they refuse unless --yes says the decision was made
// already: a pipe cannot confirm anything.

func (a *app) acceptCommand() *cobra.Command {
	var all, yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "accept NAME (TOOL... | --all)",
		Short: "Accept the changed definition of held-back tools",
		Long: `Accept the new definition of tools that server NAME changed. Plexus records
each tool's definition (title, description, schemas, annotations) when it first
sees it; a later change holds that tool back — it is neither listed nor
callable — until a person accepts it, so that a tool cannot be altered
silently after you started trusting it ("rug pull").

The change is shown first: the description as a line diff, the schemas and
annotations as a diff of their JSON, anything invisible written out. Then you
are asked to confirm. Without a terminal nothing is accepted unless --yes is
given: a script should show the change to a person first (` + "`plexus status --json`" + `
holds it under "held").

--json prints {"accepted", "server"}; the review then goes to stderr.`,
		Example: `  plexus accept docs search
  plexus accept docs --all
  plexus accept docs search --yes`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("missing NAME")
			case len(args) == 1 && !all:
				return usagef("name the tools to accept, or give --all")
			case len(args) > 1 && all:
				return usagef("give the tools to accept or --all, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, tools := args[0], args[1:]
			c, err := a.client()
			if err != nil {
				return err
			}
			sc, err := c.Server(cmd.Context(), name)
			if err != nil {
				return serverNotFound(fmt.Errorf("reading %s: %w", name, err))
			}
			st := sc.Status
			if st.NeedsApproval {
				return fmt.Errorf("server %s needs approval first: %s; review it with `plexus approve %s`", oneLine(name), oneLine(approvalReason(st)), name)
			}
			chosen, err := chooseHeld(st, tools)
			if err != nil {
				return err
			}
			if len(chosen) == 0 {
				a.progressf("nothing to accept: no tool of %s is held back", oneLine(name))
				return nil
			}
			review := a.stdout()
			if asJSON {
				review = a.stderr()
			}
			if err := writeHeldReview(review, name, chosen); err != nil {
				return err
			}
			what := plural(len(chosen), "tool")
			if len(chosen) == 1 {
				what = "tool " + oneLine(chosen[0].Tool)
			}
			if err := a.confirm(yes, fmt.Sprintf("Accept the new definition of %s of %s?", what, oneLine(name)), "accepted"); err != nil {
				return err
			}
			req := apitype.AcceptRequest{Hashes: map[string]string{}}
			for _, h := range chosen {
				req.Tools = append(req.Tools, h.Tool)
				req.Hashes[h.Tool] = h.NewHash
			}
			res, err := c.Accept(cmd.Context(), name, req)
			if err != nil {
				return serverNotFound(fmt.Errorf("accepting tools of %s: %w", name, err))
			}
			if asJSON {
				return printJSON(a.stdout(), res)
			}
			if len(res.Accepted) == 0 {
				fmt.Fprintf(a.stdout(), "nothing accepted: no tool of %s is held back any more\n", oneLine(name))
				return nil
			}
			fmt.Fprintf(a.stdout(), "accepted %s of %s (%s)\n", oneLine(strings.Join(res.Accepted, ", ")), oneLine(name), summary(res.Server))
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "accept every held tool of the server")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "accept without asking, after showing the change")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON, the review on stderr")
	return cmd
}

// chooseHeld picks the held tools named, or all of them when none are.
func chooseHeld(st apitype.ServerStatus, tools []string) ([]apitype.HeldTool, error) {
	if len(tools) == 0 {
		return st.Held, nil
	}
	var out []apitype.HeldTool
	for _, t := range tools {
		i := slices.IndexFunc(st.Held, func(h apitype.HeldTool) bool { return h.Tool == t })
		if i < 0 {
			held := "no tool of " + oneLine(st.Name) + " is held back"
			if len(st.Held) > 0 {
				var names []string
				for _, h := range st.Held {
					names = append(names, h.Tool)
				}
				held = "held back: " + oneLine(strings.Join(names, ", "))
			}
			return nil, fmt.Errorf("tool %s of %s is not held back (%s)", oneLine(t), oneLine(st.Name), held)
		}
		if !slices.ContainsFunc(out, func(h apitype.HeldTool) bool { return h.Tool == t }) {
			out = append(out, st.Held[i])
		}
	}
	return out, nil
}

func (a *app) approveCommand() *cobra.Command {
	var yes, asJSON, deny, calls bool
	var callID string
	cmd := &cobra.Command{
		Use:   "approve NAME",
		Short: "Approve a server's new command or URL and start it, or a tool call waiting for you",
		Long: `Approve the definition of server NAME — its command, args, working directory,
environment names, URL and headers — and start it. Trust in a server is bound
to that definition, not to its name: a server added or changed other than by
` + "`plexus add`" + `, ` + "`plexus edit`" + ` or ` + "`plexus import`" + ` (a settings file edited by hand
and reloaded, or a change made through the MCP face) is not started until a
person approves it, so that a command swapped under a trusted name cannot run
unseen.

The definition waiting is shown first, beside the one approved before, and you
are asked to confirm. Without a terminal nothing is approved unless --yes is
given.

With --calls, list the tool calls waiting for your approval: mcp.policy asks
for it (docs/policy.md) and the client that made them cannot ask you itself.
With --call ID, approve one (or refuse it, with --deny); it is then forwarded
(or refused) at once.`,
		Example: `  plexus approve docs
  plexus approve docs --yes
  plexus approve --calls
  plexus approve --call call-3k2m9x7q4a1b
  plexus approve --call call-3k2m9x7q4a1b --deny`,
		Args: func(cmd *cobra.Command, args []string) error {
			if calls || callID != "" {
				return exactArgs()(cmd, args)
			}
			return exactArgs("NAME")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if calls || callID != "" {
				return a.approveCall(cmd.Context(), callID, deny, asJSON)
			}
			if deny {
				return usagef("--deny refuses a call: give its --call ID")
			}
			name := args[0]
			c, err := a.client()
			if err != nil {
				return err
			}
			sc, err := c.Server(cmd.Context(), name)
			if err != nil {
				return serverNotFound(fmt.Errorf("reading %s: %w", name, err))
			}
			ap := sc.Status.Approval
			if !sc.Status.NeedsApproval || ap == nil {
				a.progressf("nothing to approve: %s is approved as it is configured", oneLine(name))
				return nil
			}
			review := a.stdout()
			if asJSON {
				review = a.stderr()
			}
			if err := writeApprovalReview(review, name, ap); err != nil {
				return err
			}
			if err := a.confirm(yes, fmt.Sprintf("Approve this definition of %s and start it?", oneLine(name)), "approved"); err != nil {
				return err
			}
			stop := a.progressAfter("starting %s…", name)
			wr, err := c.Approve(cmd.Context(), name, ap.Key)
			stop()
			if err != nil {
				return serverNotFound(fmt.Errorf("approving %s: %w", name, err))
			}
			if asJSON {
				return printJSON(a.stdout(), wr)
			}
			if wr.Server != nil {
				a.warnAll(wr.Server.Warnings)
			}
			fmt.Fprintf(a.stdout(), "approved %s (%s)\n", oneLine(name), summary(wr.Server))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking, after showing the definition")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON, the review on stderr")
	cmd.Flags().BoolVar(&calls, "calls", false, "list the tool calls waiting for your approval")
	cmd.Flags().StringVar(&callID, "call", "", "approve the tool call waiting as `ID`")
	cmd.Flags().BoolVar(&deny, "deny", false, "refuse the call (with --call)")
	return cmd
}

// stdinInteractive reports whether a person can answer a question on
// stdin; a variable so that tests can stand in for a terminal.
var stdinInteractive = func(a *app) bool { return a.stdinIsTerminal() }

// errDeclined is a question answered no.
var errDeclined = errors.New("declined")

// confirm asks a yes/no question on stderr and reads the answer from stdin,
// a terminal. yes answers it beforehand. Without a terminal it refuses:
// nobody saw the question.
func (a *app) confirm(yes bool, question, done string) error {
	if yes {
		return nil
	}
	if !stdinInteractive(a) {
		return fmt.Errorf("nothing %s: there is no terminal to confirm on; review the change above and run the command again with --yes", done)
	}
	fmt.Fprintf(a.stderr(), "%s [y/N] ", question)
	line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(a.stderr())
		return fmt.Errorf("nothing %s: no answer (%w)", done, err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &exitError{code: ExitError, err: fmt.Errorf("nothing %s: %w", done, errDeclined)}
}

// approvalReason is the reason a server needs approval, for one line.
func approvalReason(st apitype.ServerStatus) string {
	if st.Approval != nil {
		return st.Approval.Reason
	}
	return "its definition is not approved"
}

// writeApprovalReview shows the definition waiting for approval and the
// one approved before.
func writeApprovalReview(w io.Writer, name string, ap *apitype.Approval) error {
	var b strings.Builder
	fmt.Fprintf(&b, "server %s needs approval: %s\n\n", visible(name), visible(ap.Reason))
	b.WriteString("  waiting for approval\n")
	writeDefinition(&b, ap.Current)
	if ap.Approved != nil {
		b.WriteString("  approved before")
		if ap.ApprovedAt != nil {
			b.WriteString(" on " + ap.ApprovedAt.Local().Format(time.DateTime))
		}
		b.WriteString("\n")
		writeDefinition(&b, *ap.Approved)
	} else {
		b.WriteString("  never approved before\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDefinition(b *strings.Builder, d apitype.ServerDefinition) {
	item := func(key, value string) { fmt.Fprintf(b, "    %-9s %s\n", key, value) }
	if len(d.Command) > 0 {
		item("command", visible(cmdline.Join(d.Command)))
	}
	if d.Cwd != "" {
		item("cwd", visible(d.Cwd))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Env)) {
		item("env", visible(k)+" from $"+visible(d.Env[k]))
	}
	if d.URL != "" {
		item("type", visible(d.Type))
		item("url", visible(d.URL))
	}
	if len(d.HeaderNames) > 0 {
		item("headers", visible(strings.Join(d.HeaderNames, ", ")))
	}
}

// writeHeldReview shows, for each held tool, what changed: the description
// as a line diff, the schemas and annotations as a diff of their indented
// JSON, in full.
func writeHeldReview(w io.Writer, name string, held []apitype.HeldTool) error {
	var b strings.Builder
	for _, h := range held {
		fmt.Fprintf(&b, "tool %s of %s: %s\n", visible(h.Tool), visible(name), visible(h.Reason))
		if h.Old != nil && h.PinnedAt != nil {
			fmt.Fprintf(&b, "  accepted on %s as %s, now %s\n", h.PinnedAt.Local().Format(time.DateTime), shortHash(h.OldHash), shortHash(h.NewHash))
		}
		old := apitype.ToolDefinition{}
		if h.Old != nil {
			old = *h.Old
		} else {
			b.WriteString("  no accepted definition is on record; the whole definition follows\n")
		}
		field := func(label, before, after string) {
			if before == after {
				return
			}
			fmt.Fprintf(&b, "  %s:\n", label)
			writeLineDiff(&b, before, after)
		}
		field("title", old.Title, h.New.Title)
		field("description", old.Description, h.New.Description)
		field("input schema", indentJSON(old.InputSchema), indentJSON(h.New.InputSchema))
		field("output schema", indentJSON(old.OutputSchema), indentJSON(h.New.OutputSchema))
		field("annotations", indentJSON(old.Annotations), indentJSON(h.New.Annotations))
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return visible(h)
}

// indentJSON renders JSON for a line diff, or "" for none.
func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// maxDiffCells bounds the work of a line diff; beyond it the old and new
// text are shown whole, one after the other.
const maxDiffCells = 4_000_000

// writeLineDiff writes the lines of before and after as a diff: "-" for a
// line only before, "+" only after, " " for both.
func writeLineDiff(b *strings.Builder, before, after string) {
	x, y := splitLines(before), splitLines(after)
	line := func(mark byte, s string) { fmt.Fprintf(b, "    %c %s\n", mark, visible(s)) }
	if len(x)*len(y) > maxDiffCells {
		for _, s := range x {
			line('-', s)
		}
		for _, s := range y {
			line('+', s)
		}
		return
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			line(' ', x[i])
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			line('-', x[i])
			i++
		default:
			line('+', y[j])
			j++
		}
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// visible writes out what a terminal would not show or would act on —
// control characters, format characters such as zero-width spaces and bidi
// controls, invalid UTF-8 — as \u{XXXX}, so that a person reviewing a
// definition sees every character a model would read (docs/security.md T30).
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, `\u{%04X}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return r != '\t' && (isUnsafe(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r))
}

// heldSuffix is ", 1 held" for a server with tools held back, else "".
func heldSuffix(s apitype.ServerStatus) string {
	if len(s.Held) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d held", len(s.Held))
}

// pinsNote is what a person must decide about a server, for the ERROR
// column of ls and status: "" if nothing.
func pinsNote(s apitype.ServerStatus) string {
	switch {
	case s.NeedsApproval:
		return fmt.Sprintf("needs approval: %s: plexus approve %s", approvalReason(s), s.Name)
	case len(s.Held) > 0:
		var tools []string
		for _, h := range s.Held {
			tools = append(tools, h.Tool)
		}
		return fmt.Sprintf("changed, held back: %s: plexus accept %s", strings.Join(tools, ", "), s.Name)
	}
	return ""
}

// writePinsItems details, in status, what a person must decide about a
// server: each held tool and why, or why the server waits for approval.
func writePinsItems(item func(key, value string), s apitype.ServerStatus) {
	name := oneLine(s.Name)
	if s.NeedsApproval {
		item("approval", oneLine(approvalReason(s)))
		if ap := s.Approval; ap != nil && len(ap.Current.Command) > 0 {
			item("command", oneLine(cmdline.Join(ap.Current.Command)))
		} else if ap != nil && ap.Current.URL != "" {
			item("url", oneLine(ap.Current.URL))
		}
		item("review", "plexus approve "+name)
	}
	for _, h := range s.Held {
		item("held", oneLine(h.Tool)+": "+oneLine(h.Reason))
	}
	if len(s.Held) > 0 {
		item("review", "plexus accept "+name+" --all")
	}
}

// heldEventDetail describes an EventHeld for one line.
func heldEventDetail(ev apitype.Event) string {
	name := oneLine(ev.Server)
	if ev.Approval != nil {
		return fmt.Sprintf("needs approval: %s; review with `plexus approve %s`", oneLine(ev.Approval.Reason), name)
	}
	var parts []string
	for _, h := range ev.Held {
		parts = append(parts, oneLine(h.Tool)+" ("+oneLine(h.Reason)+")")
	}
	return fmt.Sprintf("%s; review with `plexus accept %s`", strings.Join(parts, ", "), name)
}
