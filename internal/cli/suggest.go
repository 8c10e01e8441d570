package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// Help for names typed wrong, and shell completion of the names the daemon
// knows: servers, tools, secrets.

// didYouMean returns the Plexus names of the tools whose own name is name
// (a bare "echo" for example_echo), at most a few, sorted.
func didYouMean(tools []apitype.Tool, name string) []string {
	var out []string
	for _, t := range tools {
		if t.Kind != "" && t.Kind != "tool" {
			continue
		}
		if t.Tool == name || strings.EqualFold(t.Tool, name) {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), 5)]
}

// toolNotFound adds "did you mean …?" to a call's not-found error when the
// name is a tool's own name rather than its Plexus name.
func (a *app) toolNotFound(ctx context.Context, c *client.Client, name string, err error) error {
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Body.Code != apitype.CodeNotFound {
		return err
	}
	list, lerr := c.Tools(ctx, "")
	if lerr != nil {
		return err
	}
	switch m := didYouMean(list.Tools, name); len(m) {
	case 0:
		return err
	case 1:
		return withRemedy(err, apitype.CodeNotFound, fmt.Sprintf("did you mean `%s`? Tools are called by their Plexus name (see `plexus tools`)", m[0]))
	default:
		return withRemedy(err, apitype.CodeNotFound, fmt.Sprintf("did you mean one of `%s`? Tools are called by their Plexus name (see `plexus tools`)", strings.Join(m, "`, `")))
	}
}

// urlAfterDash is the hint for `plexus add NAME -- https://…`: after --
// comes a command, and a URL is not one.
func urlAfterDash(argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	l := strings.ToLower(argv[0])
	if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
		return nil
	}
	return usagef("%q is a URL, and after -- comes a command: give the URL before it, plexus add NAME %s", argv[0], argv[0])
}

// completeServers completes the first argument with the servers' names.
func (a *app) completeServers(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.Servers(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, s := range list.Servers {
		if strings.HasPrefix(s.Name, toComplete) {
			out = append(out, s.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTools completes the first argument with the tools' Plexus names,
// each with its description's first line.
func (a *app) completeTools(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.Tools(cmd.Context(), "")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, t := range list.Tools {
		if strings.HasPrefix(t.Name, toComplete) {
			out = append(out, t.Name+"\t"+oneLine(t.Description))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSecrets completes the first argument with the managed
// variables' names (never their values, which the daemon does not send).
func (a *app) completeSecrets(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	sl, err := c.Secrets(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range sl.Names {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNames sets the completion of every command that names a server,
// a tool or a secret first.
func (a *app) completeNames(root *cobra.Command) {
	servers := map[string]bool{"edit": true, "rm": true, "enable": true, "disable": true, "restart": true,
		"logs": true, "login": true, "logout": true, "accept": true, "approve": true,
		"resources read": true, "prompts get": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Flags().Lookup("server") != nil {
			_ = c.RegisterFlagCompletionFunc("server", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return a.completeServers(cmd, nil, toComplete)
			})
		}
		if c.ValidArgsFunction != nil {
			return
		}
		switch path := strings.TrimPrefix(c.CommandPath(), "plexus "); {
		case servers[path]:
			c.ValidArgsFunction = a.completeServers
		case path == "call":
			c.ValidArgsFunction = a.completeTools
		case path == "secret rm":
			c.ValidArgsFunction = a.completeSecrets
		case path == "settings get" || path == "settings set" || path == "settings unset":
			c.ValidArgsFunction = a.completeSettingKeys
		}
	}
	walk(root)
}
