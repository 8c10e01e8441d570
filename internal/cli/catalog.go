package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// renderFormats are the --format values of `tools` (R-CAT-5).
var renderFormats = []string{"mcp", "openai", "anthropic"}

func (a *app) toolsCommand() *cobra.Command {
	var server, format string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools every agent is offered",
		Long: `List the catalog's tools under their Plexus names (server_tool, or with
` + "`plexus settings set names hashed`" + ` mcp_<server>_<tool>_<hash>), the names to give
to ` + "`plexus call`" + ` and in a client's permission rules.

--json prints the catalog entries; --format prints the catalog as the daemon
renders it for a model runtime (mcp, openai or anthropic), ready to hand over.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "" {
				if asJSON {
					return usagef("give --json or --format, not both: --format prints JSON already")
				}
				if !slices.Contains(renderFormats, format) {
					return usagef("--format %q: want one of %s", format, strings.Join(renderFormats, ", "))
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if format != "" {
				raw, err := c.ToolsRendered(cmd.Context(), server, format)
				if err != nil {
					return serverNotFound(err)
				}
				// Verbatim: this output is handed to a model runtime as is.
				if _, err := a.stdout().Write(raw); err != nil {
					return err
				}
				if !bytes.HasSuffix(raw, []byte("\n")) {
					_, err = io.WriteString(a.stdout(), "\n")
				}
				return err
			}
			tl, err := c.Tools(cmd.Context(), server)
			if err != nil {
				return serverNotFound(err)
			}
			a.warnAll(tl.Warnings)
			if asJSON {
				if tl.Tools == nil {
					tl.Tools = []apitype.Tool{}
				}
				return printJSON(a.stdout(), tl.Tools)
			}
			if len(tl.Tools) == 0 {
				a.progressf("no tools: see `plexus ls` for the servers and their state")
				return nil
			}
			t := &table{header: []string{"NAME", "SERVER", "TOOL", "DESCRIPTION"}}
			for _, tool := range tl.Tools {
				t.add(tool.Name, tool.Server, tool.Tool, tool.Description)
			}
			return t.write(a.stdout(), a.outputWidth())
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "list only the tools of server `NAME`")
	cmd.Flags().StringVar(&format, "format", "", "print the catalog rendered for a model runtime: mcp, openai or anthropic")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools as a JSON array")
	return cmd
}

func (a *app) callCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "call NAME [JSON-ARGS]",
		Short: "Call a tool",
		Long: `Call the tool NAME (its Plexus name, see ` + "`plexus tools`" + `) with the arguments
JSON-ARGS, a JSON object; - reads it from stdin.

Prints the text of the result; other content is summarized. A result marked
as an error goes to stderr and exits 1. --json prints the whole result (and
still exits 1 for an error result).

A call is never retried: when the connection to the server is lost during a
call, Plexus cannot know whether it took effect, and says so.`,
		Example: `  plexus call fs_read_file '{"path": "/srv/docs/README.md"}'
  echo '{"query": "mcp"}' | plexus call search_search - --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing NAME: see `plexus tools` for the names")
			}
			if len(args) > 2 {
				return usagef("unexpected argument %q: give the arguments as one JSON object, quoted", args[2])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req := apitype.CallRequest{Name: args[0]}
			if len(args) == 2 {
				raw, err := a.callArgs(args[1])
				if err != nil {
					return err
				}
				req.Arguments = raw
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Call(cmd.Context(), req)
			if err != nil {
				if hinted := a.toolNotFound(cmd.Context(), c, req.Name, err); hinted != err {
					return hinted
				}
				return withRemedy(err, apitype.CodeNotFound, "see `plexus tools` for the tool names")
			}
			return a.renderCall(res.Result, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole CallToolResult as JSON")
	return cmd
}

// callArgs reads and checks the JSON-ARGS argument. It is checked here
// because a shell quoting slip is the usual cause, and the fix is local.
func (a *app) callArgs(arg string) (json.RawMessage, error) {
	raw := []byte(arg)
	if arg == "-" {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(a.env.Stdin, 16<<20)); err != nil {
			return nil, fmt.Errorf("reading the arguments from stdin: %w", err)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, usagef(`the arguments must be a JSON object, e.g. plexus call NAME '{"path": "/tmp/notes.txt"}'`)
	}
	return json.RawMessage(bytes.TrimSpace(raw)), nil
}

func (a *app) resourcesCommand() *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List resources, or read one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			rl, err := c.Resources(cmd.Context(), server)
			if err != nil {
				return serverNotFound(err)
			}
			if asJSON {
				if rl.Resources == nil {
					rl.Resources = []apitype.Resource{}
				}
				return printJSON(a.stdout(), rl.Resources)
			}
			if len(rl.Resources) == 0 {
				a.progressf("no resources")
				return nil
			}
			t := &table{header: []string{"SERVER", "URI", "NAME", "DESCRIPTION"}}
			for _, r := range rl.Resources {
				t.add(r.Server, r.URI, r.Name, r.Description)
			}
			return t.write(a.stdout(), a.outputWidth())
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "list only the resources of server `NAME`")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resources as a JSON array")

	var readJSON bool
	read := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Print a resource's contents",
		Args:  exactArgs("SERVER", "URI"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.ReadResource(cmd.Context(), apitype.ReadResourceRequest{Server: args[0], URI: args[1]})
			if err != nil {
				return withRemedy(err, apitype.CodeNotFound, "see `plexus resources` for the URIs")
			}
			if readJSON {
				return printRawJSON(a.stdout(), res.Result)
			}
			return renderResource(a.stdout(), res.Result)
		},
	}
	read.Flags().BoolVar(&readJSON, "json", false, "print the whole ReadResourceResult as JSON")
	cmd.AddCommand(read)
	return cmd
}

func (a *app) promptsCommand() *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List prompts, or fill one in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			pl, err := c.Prompts(cmd.Context(), server)
			if err != nil {
				return serverNotFound(err)
			}
			if asJSON {
				if pl.Prompts == nil {
					pl.Prompts = []apitype.Prompt{}
				}
				return printJSON(a.stdout(), pl.Prompts)
			}
			if len(pl.Prompts) == 0 {
				a.progressf("no prompts")
				return nil
			}
			t := &table{header: []string{"SERVER", "NAME", "ARGUMENTS", "DESCRIPTION"}}
			for _, p := range pl.Prompts {
				t.add(p.Server, p.Name, promptArgs(p.Arguments), p.Description)
			}
			return t.write(a.stdout(), a.outputWidth())
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "list only the prompts of server `NAME`")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the prompts as a JSON array")

	var getJSON bool
	get := &cobra.Command{
		Use:     "get SERVER NAME [KEY=VALUE...]",
		Short:   "Print a prompt's messages",
		Example: `  plexus prompts get docs summarize path=/srv/docs/README.md`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return exactArgs("SERVER", "NAME")(cmd, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req := apitype.GetPromptRequest{Server: args[0], Name: args[1]}
			for _, kv := range args[2:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("prompt argument %q: want KEY=VALUE", kv)
				}
				if req.Arguments == nil {
					req.Arguments = map[string]string{}
				}
				req.Arguments[k] = v
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.GetPrompt(cmd.Context(), req)
			if err != nil {
				return withRemedy(err, apitype.CodeNotFound, "see `plexus prompts` for the prompts and their arguments")
			}
			if getJSON {
				return printRawJSON(a.stdout(), res.Result)
			}
			return renderPrompt(a.stdout(), res.Result)
		},
	}
	get.Flags().BoolVar(&getJSON, "json", false, "print the whole GetPromptResult as JSON")
	cmd.AddCommand(get)
	return cmd
}

// promptArgs shows a prompt's arguments, optional ones in brackets.
func promptArgs(args []apitype.PromptArgument) string {
	parts := make([]string, 0, len(args))
	for _, arg := range args {
		if arg.Required {
			parts = append(parts, arg.Name)
		} else {
			parts = append(parts, "["+arg.Name+"]")
		}
	}
	return strings.Join(parts, " ")
}
