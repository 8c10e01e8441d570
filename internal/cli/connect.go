package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/clientconf"
)

// connectResult is the --json answer of connect and disconnect.
type connectResult struct {
	Client  string `json:"client"`
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	DryRun  bool   `json:"dryRun,omitempty"`
	Backup  string `json:"backup,omitempty"`
	// Diff is the change with the values of the user's other entries
	// masked.
	Diff string `json:"diff,omitempty"`
	// Moved are the client's own entries that Plexus serves, taken out of
	// its file by connect; Restored those disconnect put back.
	Moved    []string `json:"moved,omitempty"`
	Restored []string `json:"restored,omitempty"`
	// AllowExternalCall is the face's gate after the command; nil if the
	// daemon could not be asked.
	AllowExternalCall *bool `json:"allowExternalCall,omitempty"`
}

func (a *app) connectCommand(connect bool) *cobra.Command {
	var o struct {
		scope, command, listen string
		dryRun, yes            bool
		asJSON                 bool
	}
	use, short := "disconnect CLIENT", "Take Plexus out of another client's settings"
	long := `Remove the entry that ` + "`plexus connect`" + ` wrote from CLIENT's own settings file;
the rest of the file stays as it was, and the file before is kept beside it
as FILE.plexus-backup-TIME. CLIENT is one of ` + strings.Join(clientconf.Clients(), ", ") + `.`
	if connect {
		use, short = "connect CLIENT", "Register Plexus in another client's own settings file"
		long = `Write Plexus's entry (` + "`plexus mcp`" + `) into CLIENT's own settings file, so that
the client reaches every server of Plexus through it. CLIENT is one of
` + strings.Join(clientconf.Clients(), ", ") + `.

Only that entry changes: the other servers, the formatting and the comments
of the file stay as they were. The change is printed as a diff (the values of
other entries masked), the file before is kept beside it as
FILE.plexus-backup-TIME, and the new file replaces it atomically.

Connecting is your consent to share your servers with that client: while the
face's external calls are off (clients see only plexus_status and
plexus_snapshot) it asks to switch them on; --yes does without asking.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Example: `  plexus connect claude
  plexus connect claude --scope project     # .mcp.json in this folder
  plexus connect codex --dry-run
  plexus connect gemini --yes
  plexus disconnect cursor`,
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return clientconf.Clients(), cobra.ShellCompDirectiveNoFileComp
		},
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs("CLIENT")(cmd, args); err != nil {
				return err
			}
			if _, err := clientconf.Path(args[0], clientconf.Options{Scope: o.scope}); err != nil {
				return usagef("%v", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := connectOptions(o.scope, o.command, connect)
			if err != nil {
				return err
			}
			if connect {
				if opts.Launch, err = a.launch(cmd, o.listen); err != nil {
					return err
				}
			}
			plan, err := clientconf.Prepare(args[0], opts, connect)
			if err != nil {
				return err
			}
			moved, err := clientconf.ReadMoved(plan.Path)
			if err != nil {
				return err
			}
			var moving []string
			if connect {
				moving = a.offerMove(cmd, plan, o.scope, o.yes, o.dryRun)
			} else if moved != nil {
				if err := plan.Then(func(src, edited []byte) ([]byte, error) {
					if string(src) == moved.After {
						return []byte(moved.Before), nil
					}
					return clientconf.Restore(args[0], edited, *moved)
				}); err != nil {
					return err
				}
			}
			res := connectResult{Client: args[0], Path: plan.Path, Changed: plan.Changed, DryRun: o.dryRun,
				Diff: clientconf.MaskDiff(plan.Diff(), opts.Command), Moved: moving}
			if !connect && moved != nil {
				res.Restored = moved.Names
			}
			if !o.asJSON {
				a.writeConnectPlan(plan, res.Diff, connect)
			}
			if plan.Changed && !o.dryRun {
				if res.Backup, err = plan.Write(a.now()); err != nil {
					return err
				}
				if err := a.recordMove(plan, args[0], moved, moving, connect); err != nil {
					return err
				}
				if !o.asJSON {
					a.reportConnectWrite(plan, res.Backup, connect)
				}
			}
			if connect && args[0] == "gemini" {
				a.warnGeminiTrust(opts)
			}
			if connect {
				res.AllowExternalCall = a.offerExternalCall(cmd, plan.Title, o.yes, o.dryRun)
			}
			if o.asJSON {
				return printJSON(a.stdout(), res)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.scope, "scope", clientconf.ScopeUser, "user (your settings) or project (this folder's, for claude, cursor, vscode, zed, gemini and opencode)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the change and write nothing")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the result as JSON")
	if connect {
		cmd.Flags().StringVar(&o.command, "command", "", "how the client starts Plexus (default: this program's full path)")
		cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "switch on external calls, and take out of the file the entries Plexus now serves, without asking")
		cmd.Flags().StringVar(&o.listen, "listen", "", "the loopback `ADDRESS` the client's plexus mcp starts the daemon on (default: the running daemon's)")
	}
	return cmd
}

// launch is what the client's entry needs beyond `plexus mcp` to reach
// this Plexus: PLEXUS_HOME when it is not ~/.plexus, and the daemon's
// loopback address (listen, or the running daemon's) when it is not the
// default, so that a client starting Plexus itself starts it there.
func (a *app) launch(cmd *cobra.Command, listen string) (clientconf.Launch, error) {
	var l clientconf.Launch
	home, err := client.Home()
	if err != nil {
		return l, err
	}
	if userHome, err := os.UserHomeDir(); err != nil || filepath.Clean(home) != filepath.Join(userHome, ".plexus") {
		l.Home = home
	}
	if listen == "" {
		if c, err := a.client(); err == nil {
			if st, err := c.Status(cmd.Context()); err == nil {
				listen = st.HTTPAddr
				if listen == "" {
					listen = "off"
				}
			}
		}
	}
	if listen != "" && listen != defaultListen {
		l.Listen = listen
	}
	return l, nil
}

// defaultListen is the daemon's loopback address when none is given
// (daemon.DefaultListen, which a front end does not import).
const defaultListen = "127.0.0.1:7780"

// connectOptions finds the user's folders and, to connect, the command a
// client runs.
func connectOptions(scope, command string, connect bool) (clientconf.Options, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return clientconf.Options{}, fmt.Errorf("cannot find your home folder: %w", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		return clientconf.Options{}, err
	}
	if command == "" && connect {
		// A full path: desktop apps start servers without the shell's PATH.
		exe, err := os.Executable()
		if err != nil {
			return clientconf.Options{}, fmt.Errorf("cannot find the path of this program (%w): give --command", err)
		}
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			exe = p
		}
		if strings.Contains(exe, string(filepath.Separator)+"go-build") {
			return clientconf.Options{}, fmt.Errorf("this plexus was built by `go run` into a folder that goes away: run `go install ./cmd/plexus` and use that one, or give --command")
		}
		command = exe
	}
	return clientconf.Options{Home: home, Dir: dir, Scope: scope, GOOS: runtime.GOOS, Getenv: os.Getenv, Command: command}, nil
}

func (a *app) writeConnectPlan(plan *clientconf.Plan, diff string, connect bool) {
	switch {
	case !plan.Changed && connect:
		fmt.Fprintf(a.stdout(), "%s already runs Plexus: %s is as it should be\n", plan.Title, sanitize(plan.Path))
	case !plan.Changed:
		fmt.Fprintf(a.stdout(), "%s has no entry of Plexus in %s: nothing to do\n", plan.Title, sanitize(plan.Path))
	default:
		fmt.Fprint(a.stdout(), sanitize(diff))
	}
}

func (a *app) reportConnectWrite(plan *clientconf.Plan, backup string, connect bool) {
	verb := "connected"
	if !connect {
		verb = "disconnected"
	}
	fmt.Fprintf(a.stderr(), "%s %s: wrote %s\n", verb, plan.Title, sanitize(plan.Path))
	if backup != "" {
		fmt.Fprintf(a.stderr(), "the file before is kept as %s\n", sanitize(backup))
	}
	if connect {
		fmt.Fprintf(a.stderr(), "restart %s, or reload its MCP servers, to see Plexus\n", plan.Title)
	}
}

// warnGeminiTrust says what Gemini CLI does not: it starts no MCP server
// in a folder the user has not trusted, and shows Plexus as "Disabled"
// there. Quiet when this folder (or one above it) is trusted.
func (a *app) warnGeminiTrust(o clientconf.Options) {
	b, err := os.ReadFile(filepath.Join(o.Home, ".gemini", "trustedFolders.json"))
	var trusted map[string]string
	if err == nil && json.Unmarshal(b, &trusted) == nil {
		for dir, how := range trusted {
			if how == "TRUST_FOLDER" && (dir == o.Dir || strings.HasPrefix(o.Dir, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))) {
				return
			}
			if how == "TRUST_PARENT" && strings.HasPrefix(o.Dir, filepath.Dir(dir)) {
				return
			}
		}
	}
	a.warnf("Gemini CLI starts MCP servers only in folders you trust: in %s it will show Plexus as Disabled until you trust the folder (Gemini asks at its start, or /permissions)", sanitize(o.Dir))
}

// offerExternalCall asks to switch the face's external calls on, which is
// what makes the servers' tools reach the client, and reports the state.
func (a *app) offerExternalCall(cmd *cobra.Command, title string, yes, dryRun bool) *bool {
	c, err := a.client()
	if err != nil {
		return nil
	}
	s, err := c.Settings(cmd.Context())
	if err != nil {
		a.warnf("%s; then run `plexus settings set face.allowExternalCall true` to share your servers' tools", oneLine(a.explain(err)))
		return nil
	}
	on := s.Face != nil && s.Face.AllowExternalCall
	if on {
		return &on
	}
	if dryRun {
		a.progressf("would offer to switch on external calls: %s", apitype.ExternalCallOff)
		return &on
	}
	if !yes {
		if !stdinInteractive(a) {
			a.warnf("%s", apitype.ExternalCallOff)
			return &on
		}
		question := fmt.Sprintf("Share your servers' tools, resources and prompts with %s and every other client of Plexus (face.allowExternalCall)?", title)
		if err := a.confirm(false, question, "switched on"); err != nil {
			a.progressf("external calls stay off: %s sees only plexus_status and plexus_snapshot; `plexus settings set face.allowExternalCall true` switches them on", title)
			return &on
		}
	}
	if s.Face == nil {
		s.Face = &apitype.FaceSettings{}
	}
	s.Face.AllowExternalCall = true
	saved, err := c.SetSettings(cmd.Context(), *s, s.Revision)
	if err != nil {
		a.warnf("switching on external calls: %s", oneLine(a.explain(err)))
		return &on
	}
	on = saved.Face != nil && saved.Face.AllowExternalCall
	a.progressf("external calls are on: clients of Plexus see your servers' tools")
	return &on
}
