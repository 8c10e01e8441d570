package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/cmdline"
)

// The MCP registry (registry.modelcontextprotocol.io, or the one
// registry.url names): search it, show an entry, and add one as a server.
// The daemon asks the registry and translates an entry (POST
// /v1/registry/plan); the CLI asks the person for what the entry needs and
// adds the plan's settings through the same path as `plexus add`.

func (a *app) searchCommand() *cobra.Command {
	var (
		limit   int
		cursor  string
		refresh bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "search [TEXT]",
		Short: "Search the MCP registry for servers",
		Long: `Search the MCP registry for servers whose name holds TEXT (every server without
TEXT), the latest version of each, with the ways each can run and whether
Plexus can run them. The daemon asks the registry registry.url names (the
official one, https://registry.modelcontextprotocol.io, unless set) and keeps
its answers: a registry that cannot be reached gives the last answer, with
its age.`,
		Example: `  plexus search filesystem
  plexus search github --json
  plexus search --limit 100 --cursor CURSOR`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("unexpected argument %q: quote a search of several words", args[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			q := client.RegistryQuery{Cursor: cursor, Limit: limit, Refresh: refresh}
			if len(args) == 1 {
				q.Search = args[0]
			}
			stop := a.progressAfter("asking the MCP registry…")
			res, err := c.SearchRegistry(cmd.Context(), q)
			stop()
			if err != nil {
				return fmt.Errorf("searching the MCP registry: %w", err)
			}
			if asJSON {
				return printJSON(a.stdout(), res)
			}
			a.noteSource(res.Source)
			if len(res.Servers) == 0 {
				fmt.Fprintf(a.stdout(), "no server of %s has %q in its name\n", sanitize(res.Source.Registry), sanitize(q.Search))
				return nil
			}
			t := &table{header: []string{"NAME", "VERSION", "RUNS", "DESCRIPTION"}}
			for _, s := range res.Servers {
				t.add(s.Name, s.Version, runsColumn(s), describeRegistryServer(s))
			}
			if err := t.write(a.stdout(), a.outputWidth()); err != nil {
				return err
			}
			if res.Skipped > 0 {
				a.warnf("%s of the registry's answer %s not valid and left out", plural(res.Skipped, "entry"), map[bool]string{true: "is", false: "are"}[res.Skipped == 1])
			}
			if res.NextCursor != "" {
				a.progressf("more: plexus search %s--cursor %s", searchArg(q.Search), res.NextCursor)
			}
			a.progressf("plexus show NAME says more; plexus add --from-registry NAME adds one")
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most `N` servers (1 to 100; default 30)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "go on from the `CURSOR` a search printed")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "ask the registry even if the daemon's answer is fresh")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON")
	return cmd
}

func searchArg(s string) string {
	if s == "" {
		return ""
	}
	return shellQuote(s) + " "
}

// runsColumn says how a registry server can run: the kinds Plexus can run,
// then in parentheses those it cannot.
func runsColumn(s apitype.RegistryServer) string {
	var can, cannot []string
	for _, o := range s.Options {
		if o.Runnable && !slices.Contains(can, o.Kind) {
			can = append(can, o.Kind)
		}
	}
	for _, o := range s.Options {
		if !o.Runnable && !slices.Contains(can, o.Kind) && !slices.Contains(cannot, o.Kind) {
			cannot = append(cannot, o.Kind)
		}
	}
	out := strings.Join(can, ",")
	if len(cannot) > 0 {
		if out == "" {
			out = "-"
		}
		out += " (not " + strings.Join(cannot, ",") + ")"
	}
	return out
}

func describeRegistryServer(s apitype.RegistryServer) string {
	d := s.Description
	if s.Title != "" && !strings.Contains(strings.ToLower(d), strings.ToLower(s.Title)) {
		d = s.Title + ": " + d
	}
	if s.Status == "deprecated" || s.Status == "deleted" {
		d = "[" + s.Status + "] " + d
	}
	return d
}

// noteSource says on stderr when an answer is not the registry's of now.
func (a *app) noteSource(src apitype.RegistrySource) {
	age := shortDuration(time.Duration(src.AgeMs) * time.Millisecond)
	switch {
	case src.Offline:
		a.warnf("offline: %s; this is its answer of %s ago", oneLine(src.Reason), age)
	case src.Cached && src.AgeMs >= 1000:
		a.progressf("the registry's answer of %s ago (--refresh asks again)", age)
	}
}

func (a *app) showCommand() *cobra.Command {
	var refresh, asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME[@VERSION]",
		Short: "Show a server of the MCP registry",
		Long: `Show a server of the MCP registry: what it is, its versions, each way it can
run (an npm, PyPI or NuGet package, a container image, a bundle, a remote URL)
and whether Plexus can run it, and what it needs: environment variables,
headers and arguments, which are secrets, which are required, their defaults.
` + "`plexus add --from-registry NAME`" + ` adds it.`,
		Example: `  plexus show io.github.github/github-mcp-server
  plexus show io.github.github/github-mcp-server@0.20.2
  plexus show io.github.modelcontextprotocol/server-memory --json`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version := splitRegistryRef(args[0])
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.ShowRegistry(cmd.Context(), name, version, refresh)
			if err != nil {
				return fmt.Errorf("reading %s from the MCP registry: %w", args[0], err)
			}
			if asJSON {
				return printJSON(a.stdout(), res)
			}
			a.noteSource(res.Source)
			// What the default plan needs: its inputs and notes.
			plan, perr := c.PlanRegistry(cmd.Context(), apitype.RegistryPlanRequest{Name: name, Version: res.Server.Version})
			a.writeRegistryServer(res, plan, perr)
			return nil
		},
	}
	cmd.Flags().BoolVar(&refresh, "refresh", false, "ask the registry even if the daemon's answer is fresh")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer (with the server.json) as JSON")
	return cmd
}

// splitRegistryRef splits NAME[@VERSION].
func splitRegistryRef(ref string) (name, version string) {
	if i := strings.LastIndex(ref, "@"); i > 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func (a *app) writeRegistryServer(res *apitype.RegistryShow, plan *apitype.RegistryPlan, planErr error) {
	s := res.Server
	var b strings.Builder
	title := s.Name + " " + s.Version
	if s.Title != "" {
		title += " — " + s.Title
	}
	fmt.Fprintln(&b, title)
	if s.Description != "" {
		fmt.Fprintln(&b, "  "+s.Description)
	}
	if s.Status != "" && s.Status != "active" {
		fmt.Fprintf(&b, "  %s: %s\n", s.Status, s.StatusMessage)
	}
	for _, kv := range [][2]string{{"website", s.WebsiteURL}, {"source", s.Repository}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "  %-8s %s\n", kv[0], kv[1])
		}
	}
	if len(res.Versions) > 1 {
		fmt.Fprintf(&b, "  versions %s\n", strings.Join(res.Versions, ", "))
	}
	fmt.Fprintln(&b, "\nways to run it:")
	for _, o := range s.Options {
		mark := "  "
		if plan != nil && plan.Option.Index == o.Index {
			mark = "* "
		}
		line := fmt.Sprintf("%s%d  %-6s %s (%s)", mark, o.Index, o.Kind, o.Label, o.Transport)
		if !o.Runnable {
			line += "\n       cannot: " + o.Reason
		}
		fmt.Fprintln(&b, line)
	}
	switch {
	case planErr != nil:
		fmt.Fprintf(&b, "\n%s\n", oneLine(a.explain(planErr)))
	case plan != nil:
		fmt.Fprintf(&b, "\nadded as %q with option %d, it runs:\n  %s\n", plan.Server, plan.Option.Index, planSummary(plan))
		if len(plan.Fields) > 0 {
			fmt.Fprintln(&b, "\nwhat it takes (--set KEY=VALUE; secrets are asked for, or stored with plexus secret set VAR):")
			for _, f := range plan.Fields {
				fmt.Fprintln(&b, "  "+fieldLine(f))
			}
		}
		for _, n := range plan.Notes {
			// Every input is listed above, left out or not.
			if !strings.HasPrefix(n, "optional inputs left out") {
				fmt.Fprintln(&b, "note: "+n)
			}
		}
	}
	fmt.Fprint(a.stdout(), sanitize(b.String()))
}

// fieldLine describes one input of a registry server.
func fieldLine(f apitype.RegistryField) string {
	var tags []string
	if f.Required {
		tags = append(tags, "required")
	}
	if f.Secret {
		tags = append(tags, "secret")
	}
	if f.Repeated {
		tags = append(tags, "repeatable")
	}
	if f.Default != "" {
		tags = append(tags, "default "+f.Default)
	}
	if len(f.Choices) > 0 {
		tags = append(tags, "one of "+strings.Join(f.Choices, "|"))
	}
	if f.Format != "" && f.Format != "string" {
		tags = append(tags, f.Format)
	}
	if f.Var != "" {
		v := "kept in " + f.Var
		if f.Stored {
			v += ", stored"
		}
		tags = append(tags, v)
	}
	line := f.Key
	if len(tags) > 0 {
		line += " (" + strings.Join(tags, ", ") + ")"
	}
	if f.Description != "" {
		line += ": " + f.Description
	}
	if f.Omitted != "" {
		line += " — left out: " + f.Omitted
	}
	return oneLine(line)
}

// planSummary is what the plan runs: the command line or the URL.
func planSummary(p *apitype.RegistryPlan) string {
	var cfg struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		URL     string   `json:"url"`
	}
	if json.Unmarshal(p.Config, &cfg) != nil {
		return ""
	}
	if cfg.Type == typeStdio {
		return cmdline.Join(append([]string{cfg.Command}, cfg.Args...))
	}
	return cfg.Type + " " + cfg.URL
}

// registryAdd is `plexus add --from-registry NAME[@VERSION] [SERVER]`.
type registryAdd struct {
	ref    string
	option int
	sets   []string
}

func (r *registryAdd) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&r.ref, "from-registry", "", "add the MCP registry's server `NAME[@VERSION]` (plexus search finds it); the server's name is then optional")
	fs.IntVar(&r.option, "option", 0, "with --from-registry: run it the registry's way `N` (plexus show lists them; default the first Plexus can run)")
	fs.StringArrayVar(&r.sets, "set", nil, "with --from-registry: give the input `KEY=VALUE` (plexus show lists them); repeatable")
}

// flagsBesides are the add flags that --from-registry takes; the others
// describe a server by hand.
var registryAddFlags = []string{"from-registry", "option", "set", "no-verify", "disabled", "startup-timeout", "call-timeout",
	"sandbox", "allow-read", "allow-write", "allow-net", "json"}

func (a *app) addFromRegistry(cmd *cobra.Command, args []string, r *registryAdd, f *serverFlags, sb *sandboxFlags, disabled bool) error {
	var bad []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !slices.Contains(registryAddFlags, fl.Name) {
			bad = append(bad, "--"+fl.Name)
		}
	})
	switch {
	case len(bad) > 0:
		return usagef("%s cannot be combined with --from-registry: the registry's entry says how the server runs; change it after with plexus edit", strings.Join(bad, ", "))
	case cmd.ArgsLenAtDash() >= 0:
		return usagef("--from-registry takes no command: the registry's entry says how the server runs")
	case len(args) > 1:
		return usagef("unexpected argument %q: plexus add --from-registry NAME[@VERSION] [SERVER]", args[1])
	}
	name, version := splitRegistryRef(r.ref)
	values := map[string][]string{}
	for _, s := range r.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return usagef("--set takes KEY=VALUE, such as --set MEMORY_FILE_PATH=~/memory.jsonl")
		}
		values[k] = append(values[k], v)
	}
	req := apitype.RegistryPlanRequest{Name: name, Version: version, Option: r.option, Values: values}
	if len(args) == 1 {
		req.Server = args[0]
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	plan, err := c.PlanRegistry(ctx, req)
	if err != nil {
		return fmt.Errorf("adding %s from the MCP registry: %w", r.ref, err)
	}
	if plan.NameTaken {
		return fmt.Errorf("a server named %s exists already: give the new one another name: plexus add --from-registry %s NAME", plan.Server, r.ref)
	}
	in := a.newAsker()
	// Required values the person did not give: asked at a terminal,
	// else named with the flag that gives them.
	if len(plan.Missing) > 0 {
		if !stdinInteractive(a) {
			return usagef("%s needs %s: give %s", r.ref, strings.Join(plan.Missing, ", "), setFlags(plan))
		}
		for _, key := range plan.Missing {
			f := fieldByKey(plan, key)
			v, err := in.line(fieldPrompt(f))
			if err != nil {
				return err
			}
			if v == "" {
				v = f.Default
			}
			req.Values[key] = []string{v}
		}
		if plan, err = c.PlanRegistry(ctx, req); err != nil {
			return fmt.Errorf("adding %s from the MCP registry: %w", r.ref, err)
		}
		if len(plan.Missing) > 0 {
			return usagef("%s still needs %s", r.ref, strings.Join(plan.Missing, ", "))
		}
	}
	secrets, optional, err := a.askSecrets(in, plan)
	if err != nil {
		return err
	}
	if len(optional) > 0 {
		req.Secrets = optional
		if plan, err = c.PlanRegistry(ctx, req); err != nil {
			return fmt.Errorf("adding %s from the MCP registry: %w", r.ref, err)
		}
	}
	for _, n := range plan.Notes {
		a.progressf("note: %s", n)
	}
	a.progressf("%s %s, option %d (%s): %s", plan.Name, plan.Version, plan.Option.Index, plan.Option.Kind, planSummary(plan))
	put := apitype.PutServerRequest{Name: plan.Server, Config: plan.Config, NoVerify: f.noVerify}
	if len(secrets) > 0 {
		put.Secrets = secrets
	}
	if err := applyRegistryFlags(&put, f, sb, disabled); err != nil {
		return err
	}
	return a.addServer(cmd, c, put, !f.noVerify && !disabled, "nothing was saved; --no-verify saves one that cannot start yet")
}

// applyRegistryFlags applies the add flags --from-registry takes.
func applyRegistryFlags(put *apitype.PutServerRequest, f *serverFlags, sb *sandboxFlags, disabled bool) error {
	var cfg map[string]any
	if err := json.Unmarshal(put.Config, &cfg); err != nil {
		return err
	}
	if err := applyCommon(cfg, f, nil); err != nil {
		return err
	}
	if disabled {
		cfg[keyEnabled] = false
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	put.Config = raw
	return sb.apply(put)
}

func fieldByKey(p *apitype.RegistryPlan, key string) apitype.RegistryField {
	for _, f := range p.Fields {
		if f.Key == key {
			return f
		}
	}
	return apitype.RegistryField{Key: key, Label: key}
}

func setFlags(p *apitype.RegistryPlan) string {
	var out []string
	for _, k := range p.Missing {
		out = append(out, "--set "+k+"=VALUE")
	}
	return strings.Join(out, " ")
}

func fieldPrompt(f apitype.RegistryField) string {
	p := f.Label
	if f.Description != "" {
		p += " (" + f.Description + ")"
	}
	if len(f.Choices) > 0 {
		p += " [" + strings.Join(f.Choices, "|") + "]"
	}
	if f.Default != "" {
		p += " [default " + f.Default + "]"
	}
	return sanitize(p) + ": "
}

// askSecrets gets the values of the plan's secrets: a stored one is kept;
// a required one not stored is asked for at a terminal (else the error
// says how to store it first); an optional one is offered at a terminal.
// It returns the values by managed variable, and the keys of the optional
// secrets given.
func (a *app) askSecrets(in *asker, p *apitype.RegistryPlan) (map[string]string, []string, error) {
	values := map[string]string{}
	var optional []string
	for _, f := range p.Fields {
		if !f.Secret || f.Var == "" || f.Omitted != "" {
			continue
		}
		if f.Stored {
			a.progressf("%s: using the stored secret %s", f.Label, f.Var)
			continue
		}
		if !stdinInteractive(a) {
			if f.Required {
				return nil, nil, fmt.Errorf("%s needs the secret %s (%s); nothing was saved: store it first with `plexus secret set %s` (it reads the value from stdin), or run this at a terminal, which asks for it",
					p.Name, f.Label, oneLine(f.Description), f.Var)
			}
			continue
		}
		what := "Value of " + f.Label
		if f.Description != "" {
			what += " (" + f.Description + ")"
		}
		if !f.Required {
			what += ", optional: enter to skip"
		}
		v, err := in.secret(sanitize(what))
		if err != nil {
			return nil, nil, err
		}
		switch {
		case v == "" && f.Required:
			return nil, nil, fmt.Errorf("%s is required: nothing was saved", f.Label)
		case v == "":
			continue
		}
		values[f.Var] = v
		if !f.Required {
			optional = append(optional, f.Key)
		}
	}
	return values, optional, nil
}

// asker reads answers from the terminal: lines, and secrets without echo.
type asker struct {
	a *app
	r *bufio.Reader
}

func (a *app) newAsker() *asker { return &asker{a: a, r: bufio.NewReader(a.env.Stdin)} }

func (in *asker) line(prompt string) (string, error) {
	fmt.Fprint(in.a.stderr(), prompt)
	s, err := in.r.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		fmt.Fprintln(in.a.stderr())
		return "", fmt.Errorf("no answer: nothing was saved")
	}
	return strings.TrimSpace(s), nil
}

func (in *asker) secret(prompt string) (string, error) {
	f, ok := in.a.env.Stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return in.line(prompt + ": ")
	}
	fmt.Fprint(in.a.stderr(), prompt+" (not shown): ")
	v, err := readHidden(f)
	fmt.Fprintln(in.a.stderr())
	if err != nil {
		if errors.Is(err, errInterrupted) {
			return "", fmt.Errorf("interrupted: nothing was saved")
		}
		return "", fmt.Errorf("reading the value: %w", err)
	}
	return v, nil
}
