package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/buildinfo"
)

// Command groups, in the order help lists them.
const (
	groupDaemon  = "daemon"
	groupServers = "servers"
	groupCatalog = "catalog"
	groupSecrets = "secrets"
	groupOther   = "other"
)

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "plexus",
		Short: "Plexus runs your MCP servers once and shares them with every agent",
		Long: `Plexus runs your MCP servers once, in one daemon, and shares them with every
agent on this machine under stable tool names.

This command talks to the running daemon over its socket in $PLEXUS_HOME
(default ~/.plexus); it never edits a settings file. Results go to stdout,
warnings and progress to stderr; --json prints stable JSON for scripts.`,
		Example: `  plexus daemon
  plexus add docs https://mcp.example.com/mcp --bearer-env DOCS_TOKEN
  plexus add fs -- npx -y @modelcontextprotocol/server-filesystem /srv/docs
  plexus ls
  plexus tools --server fs
  plexus call fs_read_file '{"path": "/srv/docs/README.md"}'`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.started = true
			return nil
		},
	}
	root.PersistentFlags().Bool("json", false, jsonFlagUsage)
	// --version: the same line as `plexus version`.
	root.Version = buildinfo.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{msg: err.Error()}
	})
	root.AddGroup(
		&cobra.Group{ID: groupDaemon, Title: "Daemon:"},
		&cobra.Group{ID: groupServers, Title: "Servers:"},
		&cobra.Group{ID: groupCatalog, Title: "Tools, resources and prompts:"},
		&cobra.Group{ID: groupSecrets, Title: "Secrets:"},
		&cobra.Group{ID: groupOther, Title: "Other:"},
	)
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)

	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupDaemon, a.daemonCommand(), a.storeCommand(), a.serviceCommand(), a.statusCommand(), a.reloadCommand(), a.revisionsCommand(), a.eventsCommand(), a.auditCommand(), a.settingsCommand())
	add(groupServers, a.lsCommand(), a.addCommand(), a.editCommand(), a.rmCommand(),
		a.enableCommand(true), a.enableCommand(false), a.restartCommand(), a.logsCommand(),
		a.loginCommand(), a.logoutCommand())
	add(groupServers, a.importCommand(), a.exportCommand(), a.connectCommand(true), a.connectCommand(false))
	add(groupServers, a.searchCommand(), a.showCommand())
	add(groupServers, a.acceptCommand(), a.approveCommand(), a.tuiCommand())
	add(groupCatalog, a.toolsCommand(), a.callCommand(), a.resourcesCommand(), a.promptsCommand())
	add(groupSecrets, a.secretCommand())
	add(groupOther, a.uiCommand(), a.mcpCommand(), a.exampleServerCommand(), a.versionCommand())
	a.completeNames(root)
	return root
}

// exactArgs is cobra.ExactArgs with a message that names what is missing.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return usagef("missing %s", joinAnd(names[len(args):]))
		case len(args) > len(names):
			return usagef("unexpected argument %q", args[len(names)])
		}
		return nil
	}
}

// joinAnd joins words as "A", "A and B", "A, B and C".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	out := words[0]
	for _, w := range words[1 : len(words)-1] {
		out += ", " + w
	}
	return out + " and " + words[len(words)-1]
}

var errNoRunner = errors.New("this build of plexus cannot run it")
