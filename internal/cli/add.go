package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/cmdline"
)

// serverFlags are the flags add and edit share.
type serverFlags struct {
	command        string
	transport      string
	headers        []string
	envs           []string
	cwd            string
	bearerEnv      string
	callTimeout    int
	startupTimeout int
	installTimeout int
	start          string
	idleStop       int
	enabledTools   []string
	disabledTools  []string
	noVerify       bool
	oauth          oauthFlags
}

func (f *serverFlags) register(fs *pflag.FlagSet, edit bool) {
	// Backquoted words name the flag's value in help (pflag.UnquoteUsage).
	fs.StringVar(&f.command, "command", "", "run the command `LINE` over stdio, quoted as in a shell (split here; no shell runs it)")
	fs.StringVar(&f.transport, "transport", "", "the `TRANSPORT` of a URL server: http (streamable HTTP, the default) or sse (legacy)")
	// StringArray, not StringSlice: a header value may contain commas.
	fs.StringArrayVar(&f.headers, "header", nil, "send header NAME with the value of secret VAR (`NAME=VAR`), or with text holding ${VAR}; repeatable")
	fs.StringArrayVar(&f.envs, "env", nil, "set variable NAME of a stdio server to the value of secret VAR (`NAME=VAR`); repeatable")
	fs.StringVar(&f.cwd, "cwd", "", "run a stdio server in `DIR` (default $PLEXUS_HOME)")
	bearer := "send Authorization: Bearer with the value of secret `VAR`"
	if edit {
		bearer += "; - removes it"
	}
	fs.StringVar(&f.bearerEnv, "bearer-env", "", bearer)
	zero := ""
	if edit {
		zero = "; 0 restores the default"
	}
	// The times: milliseconds, or a duration with its unit (millisFlag).
	fs.Var((*millisFlag)(&f.callTimeout), "call-timeout", "allow a tool call `MS` milliseconds (or 90s, 5m…)"+zero)
	fs.Var((*millisFlag)(&f.startupTimeout), "startup-timeout", "allow the server `MS` milliseconds (or 90s, 5m…) to start and list its tools"+zero)
	fs.Var((*millisFlag)(&f.installTimeout), "install-timeout", "allow a first start by npx, uvx… (which may download) `MS` milliseconds (or 90s, 5m…)"+zero)
	fs.StringVar(&f.start, "start", "", "start the server `WHEN`: onDemand (at first use, once its tools are known) or eager"+zero)
	fs.Var((*millisFlag)(&f.idleStop), "idle-stop", "stop the server after `MS` milliseconds (or 90s, 5m…) unused"+zero)
	empty := ""
	if edit {
		empty = "; '' removes the list"
	}
	fs.StringSliceVar(&f.enabledTools, "enabled-tools", nil, "offer only the tools `a,b`"+empty)
	fs.StringSliceVar(&f.disabledTools, "disabled-tools", nil, "hide the tools `a,b`"+empty)
	f.oauth.register(fs, edit)
	fs.BoolVar(&f.noVerify, "no-verify", false, "save without starting the server first")
	fs.SortFlags = false
}

func (a *app) addCommand() *cobra.Command {
	var f serverFlags
	var sb sandboxFlags
	var reg registryAdd
	var disabled bool
	cmd := &cobra.Command{
		Use:   "add NAME (URL | -- COMMAND [ARGS...] | --command LINE | --from-registry NAME[@VERSION])",
		Short: "Add a server",
		Long: `Add a server: a remote one by its URL, or a local one by the command that runs
it over stdio. The daemon starts the server to check that it works before
saving it, unless --no-verify.

A command after -- is taken as is, one argument per word; --command takes a
command line as typed in a shell and splits it, honouring quotes. Plexus runs
it without a shell.

Secrets are never written in the settings: store them with
` + "`plexus secret set VAR`" + ` and refer to them by name with --header, --env
and --bearer-env. A key in the URL's query (?api_key=…, ?token=…) is stored
as the managed secret <NAME>_<PARAM> and the URL keeps ${<NAME>_<PARAM>}.

--from-registry adds a server of the MCP registry (plexus search finds it,
plexus show says what it needs): its npm, PyPI or NuGet package runs with npx,
uvx or dnx, its remote is connected to; required inputs are given with --set
KEY=VALUE or asked for, secrets are asked for at a terminal (or stored before
with plexus secret set VAR) and kept as managed secrets.`,
		Example: `  plexus add search https://mcp.example.com/mcp --header X-Api-Key=SEARCH_KEY
  plexus add legacy https://old.example.com/sse --transport sse --bearer-env LEGACY_TOKEN
  plexus add billing https://billing.example.com/mcp --oauth-grant client_credentials --client-id plexus --client-secret-env BILLING_SECRET
  plexus add fs -- npx -y @modelcontextprotocol/server-filesystem /srv/docs
  plexus add fs --command 'npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"'
  plexus add notes --sandbox --allow-write ~/notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  plexus add gh --env GITHUB_TOKEN=MY_GITHUB_TOKEN -- github-mcp-server stdio
  plexus add --from-registry io.github.github/github-mcp-server
  plexus add --from-registry io.github.neo4j-contrib/mcp-neo4j-cypher graph --set NEO4J_URI=bolt://127.0.0.1:7687`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if reg.ref != "" {
				return a.addFromRegistry(cmd, args, &reg, &f, &sb, disabled)
			}
			if reg.option != 0 || len(reg.sets) > 0 {
				return usagef("--option and --set go with --from-registry")
			}
			req, err := buildAdd(args, cmd.ArgsLenAtDash(), &f, disabled)
			if err != nil {
				return err
			}
			if err := sb.apply(&req); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			a.noteURLSecrets(req.Secrets)
			return a.addServer(cmd, c, req, !f.noVerify && !disabled,
				"`plexus edit NAME` changes an existing server; --no-verify saves one that cannot start yet")
		},
	}
	f.register(cmd.Flags(), false)
	cmd.Flags().BoolVar(&disabled, "disabled", false, "save the server switched off")
	sb.register(cmd.Flags(), false)
	reg.register(cmd)
	return cmd
}

// addServer adds req, following its start when it is verified, and
// reports the result; remedy is the advice when it cannot start.
func (a *app) addServer(cmd *cobra.Command, c *client.Client, req apitype.PutServerRequest, verified bool, remedy string) error {
	stop := func() {}
	if verified {
		stop = a.watchStart(cmd.Context(), c, req.Name, "starting "+req.Name+" to check that it works")
	}
	wr, err := c.AddServer(cmd.Context(), req, 0)
	stop()
	if err != nil {
		if timedOut := startTimedOut(err, req.Name, true); timedOut != err {
			return fmt.Errorf("adding %s: %w", req.Name, timedOut)
		}
		return withRemedy(fmt.Errorf("adding %s: %w", req.Name, err), apitype.CodeConflict, remedy)
	}
	if wr.Server != nil {
		a.warnAll(wr.Server.Warnings)
	}
	return a.done(cmd, wr, func() { fmt.Fprintf(a.stdout(), "added %s (%s)\n", req.Name, summary(wr.Server)) })
}

// buildAdd turns add's arguments into the request. dash is the number of
// arguments before `--`, or -1.
func buildAdd(args []string, dash int, f *serverFlags, disabled bool) (apitype.PutServerRequest, error) {
	var req apitype.PutServerRequest
	if len(args) == 0 || dash == 0 {
		return req, usagef("give the server's name first: plexus add NAME URL, or plexus add NAME -- COMMAND [ARGS...]")
	}
	req.Name, req.NoVerify = args[0], f.noVerify
	rest, argv := args[1:], []string(nil)
	if dash > 0 {
		rest, argv = args[1:dash], args[dash:]
		if len(argv) == 0 {
			return req, usagef("give the command after --")
		}
		if err := urlAfterDash(argv); err != nil {
			return req, err
		}
	}
	if len(rest) > 1 {
		return req, usagef("unexpected argument %q: a command goes after --: plexus add NAME -- COMMAND [ARGS...]", rest[1])
	}
	url := ""
	if len(rest) == 1 {
		url = rest[0]
	}
	if argv != nil && f.command != "" {
		return req, usagef("give the command either after -- or with --command, not both")
	}
	if f.command != "" {
		var err error
		if argv, err = splitCommand(f.command); err != nil {
			return req, err
		}
	}
	switch {
	case url != "" && argv != nil:
		return req, usagef("give either a URL or a command, not both")
	case url == "" && argv == nil:
		return req, usagef("give a URL (plexus add NAME URL) or a command (plexus add NAME -- COMMAND [ARGS...])")
	}

	cfg := map[string]any{}
	if argv != nil {
		if f.transport != "" {
			return req, usagef("--transport is for URL servers: a command makes a stdio server")
		}
		if err := checkRemoteFlagsUnused(f); err != nil {
			return req, err
		}
		cfg[keyType] = typeStdio
		setArgv(cfg, argv)
	} else {
		if err := checkURL(url); err != nil {
			return req, err
		}
		if len(f.envs) > 0 || f.cwd != "" {
			return req, usagef("--env and --cwd are for stdio servers; a URL server takes --header and --bearer-env")
		}
		cfg[keyType] = typeHTTP
		if f.transport != "" {
			if err := checkTransport(f.transport); err != nil {
				return req, err
			}
			cfg[keyType] = f.transport
		}
		cfg[keyURL] = url
		req.Secrets = moveURLSecrets(req.Name, cfg)
	}
	if err := applyCommon(cfg, f, nil); err != nil {
		return req, err
	}
	if disabled {
		cfg[keyEnabled] = false
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return req, fmt.Errorf("encoding the server's settings: %w", err)
	}
	req.Config = raw
	return req, nil
}

// applyCommon applies the flags add and edit share, other than the command,
// URL and transport. For add, changed is nil and every non-zero flag counts;
// for edit, only the flags given count, so that a zero value can remove.
func applyCommon(cfg map[string]any, f *serverFlags, changed func(string) bool) error {
	given := func(name string, nonZero bool) bool {
		if changed == nil {
			return nonZero
		}
		return changed(name)
	}
	for _, h := range f.headers {
		name, v, err := parseHeader(h)
		if err != nil {
			return err
		}
		headers := subMap(cfg, keyHeaders)
		// Header names are case-insensitive: replace, never duplicate.
		if old, ok := findFold(headers, name); ok {
			delete(headers, old)
		}
		headers[name] = v
	}
	for _, e := range f.envs {
		name, v, err := parseEnv(e)
		if err != nil {
			return err
		}
		subMap(cfg, keyEnv)[name] = v
	}
	if given("cwd", f.cwd != "") {
		setOrDelete(cfg, keyCwd, f.cwd, f.cwd == "")
	}
	if given("bearer-env", f.bearerEnv != "") {
		if f.bearerEnv == "-" && changed != nil {
			delete(cfg, keyBearer)
		} else {
			if err := checkVar("--bearer-env", f.bearerEnv); err != nil {
				return err
			}
			cfg[keyBearer] = f.bearerEnv
		}
	}
	if given("call-timeout", f.callTimeout != 0) {
		if err := checkTimeout("call-timeout", f.callTimeout); err != nil {
			return err
		}
		setOrDelete(cfg, keyCallTimeout, f.callTimeout, f.callTimeout == 0)
	}
	if given("startup-timeout", f.startupTimeout != 0) {
		if err := checkTimeout("startup-timeout", f.startupTimeout); err != nil {
			return err
		}
		setOrDelete(cfg, keyStartupTimeout, f.startupTimeout, f.startupTimeout == 0)
	}
	if given("install-timeout", f.installTimeout != 0) {
		if err := checkTimeout("install-timeout", f.installTimeout); err != nil {
			return err
		}
		setOrDelete(cfg, keyInstallTimeout, f.installTimeout, f.installTimeout == 0)
	}
	if given("idle-stop", f.idleStop != 0) {
		if err := checkTimeout("idle-stop", f.idleStop); err != nil {
			return err
		}
		setOrDelete(cfg, keyIdleStop, f.idleStop, f.idleStop == 0)
	}
	if given("start", f.start != "") {
		setOrDelete(cfg, keyStart, f.start, f.start == "" || f.start == "0")
	}
	if given("enabled-tools", len(f.enabledTools) > 0) {
		setOrDelete(cfg, keyEnabledTools, f.enabledTools, len(f.enabledTools) == 0)
	}
	if given("disabled-tools", len(f.disabledTools) > 0) {
		setOrDelete(cfg, keyDisabledTools, f.disabledTools, len(f.disabledTools) == 0)
	}
	return f.oauth.apply(cfg, given)
}

// checkRemoteFlagsUnused refuses URL-server flags on a stdio server.
func checkRemoteFlagsUnused(f *serverFlags) error {
	if len(f.headers) > 0 || f.bearerEnv != "" {
		return usagef("--header and --bearer-env are for URL servers; a stdio server takes --env NAME=VAR")
	}
	if f.oauth.used() {
		return usagef("the OAuth flags are for URL servers: a stdio server takes its credentials with --env NAME=VAR")
	}
	return nil
}

// splitCommand splits --command as a shell would, without running one.
func splitCommand(line string) ([]string, error) {
	argv, err := cmdline.Split(line)
	if err != nil {
		return nil, usagef("--command: %v", err)
	}
	if len(argv) == 0 {
		return nil, usagef("--command is empty")
	}
	return argv, nil
}
