package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/serverconf"
)

// editFlags are edit's own flags, beside the shared ones.
type editFlags struct {
	serverFlags
	url       string
	rmHeaders []string
	rmEnvs    []string
	sandbox   sandboxFlags
}

func (a *app) editCommand() *cobra.Command {
	var f editFlags
	cmd := &cobra.Command{
		Use:   "edit NAME [flags] [-- COMMAND [ARGS...]]",
		Short: "Change a server's settings",
		Long: `Change only what the flags say and keep every other setting of the server.

The edit is based on the settings as read now: if they change before it is
saved (another edit, the web page), it is refused and can be run again.
Giving --url to a stdio server, or a command to a URL server, changes its kind
and drops the settings of the old kind.`,
		Example: `  plexus edit search --header X-Api-Key=NEW_SEARCH_KEY --rm-header X-Old
  plexus edit search --bearer-env -
  plexus edit fs --command 'npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"'
  plexus edit fs --call-timeout 120000 --disabled-tools write_file,move_file`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if len(args) == 0 || dash == 0 {
				return usagef("give the server's name first: plexus edit NAME [flags]")
			}
			name := args[0]
			var argv []string
			switch {
			case dash > 0 && len(args) == dash:
				return usagef("give the command after --")
			case dash > 0 && dash > 1:
				return usagef("unexpected argument %q: a command goes after --", args[1])
			case dash > 0:
				argv = args[dash:]
			case len(args) > 1:
				return usagef("unexpected argument %q: use --url URL or -- COMMAND [ARGS...]", args[1])
			}
			// Checked before reading the server: a usage error should not
			// depend on the daemon running.
			argv, err := checkEditFlags(&f, argv, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			sc, err := c.Server(cmd.Context(), name)
			if err != nil {
				return serverNotFound(fmt.Errorf("reading %s: %w", name, err))
			}
			cfg, err := serverconf.Decode(sc.Config)
			if err != nil {
				return fmt.Errorf("reading %s: %w", name, err)
			}
			warnings, err := applyEdit(cfg, &f, argv, cmd.Flags().Changed)
			if err != nil {
				return err
			}
			if f.sandbox.given() {
				if err := f.sandbox.applyTo(cfg); err != nil {
					return err
				}
			}
			for _, w := range warnings {
				a.warnf("%s", w)
			}
			urlSecrets := moveURLSecrets(name, cfg)
			a.noteURLSecrets(urlSecrets)
			raw, err := json.Marshal(cfg)
			if err != nil {
				return fmt.Errorf("encoding the server's settings: %w", err)
			}
			stop := func() {}
			if !f.noVerify && cfg[keyEnabled] != false {
				stop = a.watchStart(cmd.Context(), c, name, "restarting "+name+" to check that it works")
			}
			req := apitype.PutServerRequest{Name: name, Config: raw, NoVerify: f.noVerify, Secrets: urlSecrets}
			wr, err := c.PutServer(cmd.Context(), name, req, sc.Revision)
			stop()
			if err != nil {
				if isStale(err) {
					return fmt.Errorf("saving %s: the settings changed meanwhile: run the command again", name)
				}
				return serverNotFound(fmt.Errorf("saving %s: %w", name, startTimedOut(err, name, false)))
			}
			if wr.Server != nil {
				a.warnAll(wr.Server.Warnings)
			}
			return a.done(cmd, wr, func() { fmt.Fprintf(a.stdout(), "updated %s (%s)\n", name, summary(wr.Server)) })
		},
	}
	f.register(cmd.Flags(), true)
	cmd.Flags().StringVar(&f.url, "url", "", "the server's `URL` (makes a stdio server a URL server)")
	cmd.Flags().StringArrayVar(&f.rmHeaders, "rm-header", nil, "remove header `NAME`; repeatable")
	cmd.Flags().StringArrayVar(&f.rmEnvs, "rm-env", nil, "remove variable `NAME` of a stdio server; repeatable")
	f.sandbox.register(cmd.Flags(), true)
	return cmd
}

// isStale reports whether err refuses a write because the settings changed
// after they were read (409 with the code stale_revision).
func isStale(err error) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Body.Code == apitype.CodeStale
}

// editsSomething reports whether the command line asks for any change.
func editsSomething(argv []string, changed func(string) bool) bool {
	if argv != nil {
		return true
	}
	for _, name := range []string{"command", "transport", "header", "env", "cwd", "bearer-env", "call-timeout",
		"startup-timeout", "install-timeout", "start", "idle-stop", "enabled-tools", "disabled-tools", "url", "rm-header", "rm-env",
		"sandbox", "no-sandbox", "allow-read", "allow-write", "allow-net"} {
		if changed(name) {
			return true
		}
	}
	return false
}

// checkEditFlags checks what can be checked without the stored settings, so
// that a mistake in the command line is a usage error whether or not the
// daemon runs. It returns the new argv, if the edit gives one.
func checkEditFlags(f *editFlags, argv []string, changed func(string) bool) ([]string, error) {
	if !editsSomething(argv, changed) {
		return nil, usagef("nothing to change: give at least one flag")
	}
	if argv != nil && changed("command") {
		return nil, usagef("give the command either after -- or with --command, not both")
	}
	if changed("command") {
		var err error
		if argv, err = splitCommand(f.command); err != nil {
			return nil, err
		}
	}
	if changed("url") {
		if argv != nil {
			return nil, usagef("give either --url or a command, not both")
		}
		if err := checkURL(f.url); err != nil {
			return nil, err
		}
	}
	if changed("transport") {
		if argv != nil {
			return nil, usagef("--transport is for URL servers: a command makes a stdio server")
		}
		if err := checkTransport(f.transport); err != nil {
			return nil, err
		}
	}
	// Parse the rest once on a scratch map: the errors are the same as
	// they will be on the real settings.
	if err := applyCommon(map[string]any{}, &f.serverFlags, changed); err != nil {
		return nil, err
	}
	return argv, nil
}

// applyEdit changes cfg as the flags given say and returns warnings for
// people. argv is the result of checkEditFlags; changed reports whether a
// flag was given.
func applyEdit(cfg map[string]any, f *editFlags, argv []string, changed func(string) bool) ([]string, error) {
	// Work out the kind of server the edit leaves.
	from, _ := cfg[keyType].(string)
	to := from
	switch {
	case argv != nil:
		to = typeStdio
	case changed("transport"):
		to = f.transport
	case changed("url") && from == typeStdio:
		to = typeHTTP
	}
	var warnings []string
	if to != from {
		if to == typeStdio && argv == nil {
			return nil, usagef("a stdio server needs a command: give --command LINE or -- COMMAND [ARGS...]")
		}
		if from == typeStdio && !changed("url") {
			return nil, usagef("a %s server needs a URL: give --url URL", to)
		}
		drop := remoteKeys
		if to != typeStdio {
			drop = stdioKeys
		}
		if from == typeStdio || to == typeStdio {
			var dropped []string
			for _, k := range drop {
				if _, ok := cfg[k]; ok {
					dropped = append(dropped, k)
					delete(cfg, k)
				}
			}
			if len(dropped) > 0 {
				warnings = append(warnings, fmt.Sprintf("the server changes from %s to %s: its %s settings are dropped", from, to, joinAnd(dropped)))
			}
		}
		cfg[keyType] = to
	}

	if to == typeStdio {
		if len(f.headers) > 0 || len(f.rmHeaders) > 0 || changed("bearer-env") {
			return nil, usagef("--header, --rm-header and --bearer-env are for URL servers; a stdio server takes --env NAME=VAR")
		}
	} else if len(f.envs) > 0 || len(f.rmEnvs) > 0 || changed("cwd") {
		return nil, usagef("--env, --rm-env and --cwd are for stdio servers; a URL server takes --header and --bearer-env")
	}

	if argv != nil {
		setArgv(cfg, argv)
	}
	if changed("url") {
		cfg[keyURL] = f.url
	}
	// Removals first, so that --rm-header X --header X=VAR replaces.
	for _, h := range f.rmHeaders {
		if err := removeKey(cfg, keyHeaders, h, "header", true); err != nil {
			return nil, err
		}
	}
	for _, e := range f.rmEnvs {
		if err := removeKey(cfg, keyEnv, e, "variable", false); err != nil {
			return nil, err
		}
	}
	if err := applyCommon(cfg, &f.serverFlags, changed); err != nil {
		return nil, err
	}
	return warnings, nil
}

// removeKey deletes name from the map cfg[key], dropping the map when it
// empties. A name that is not there is an error: it is most likely a typo,
// and silently doing nothing would hide it.
func removeKey(cfg map[string]any, key, name, what string, fold bool) error {
	m, _ := cfg[key].(map[string]any)
	k, ok := name, false
	if fold {
		k, ok = findFold(m, name)
	} else {
		_, ok = m[name]
	}
	if !ok {
		have := make([]string, 0, len(m))
		for n := range m {
			have = append(have, n)
		}
		slices.Sort(have)
		if len(have) == 0 {
			return fmt.Errorf("the server has no %s %q: it has none", what, name)
		}
		return fmt.Errorf("the server has no %s %q: it has %s", what, name, strings.Join(have, ", "))
	}
	delete(m, k)
	if len(m) == 0 {
		delete(cfg, key)
	}
	return nil
}
