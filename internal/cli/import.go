package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// importDialects are the formats the daemon reads. The CLI knows their
// names only, to read each client's usual file and to refuse a typo before
// sending megabytes; the parsing is the daemon's.
var importDialects = []string{"claude", "claude-desktop", "claude-project", "cline", "codex", "continue", "cursor", "gemini", "goose", "moltis", "opencode", "vscode", "windsurf", "zed"}

// exportClients are the clients `plexus export` writes for.
var exportClients = []string{"claude", "claude-desktop", "codex", "cursor", "gemini", "goose", "vscode", "zed"}

// maxImportFile matches the daemon's limit on an imported file.
const maxImportFile = 16 << 20

func (a *app) importCommand() *cobra.Command {
	var (
		dryRun, asJSON, sandboxed bool
		dialect                   string
	)
	cmd := &cobra.Command{
		Use:   "import [--dry-run] (FILE | CLIENT)",
		Short: "Add the MCP servers another client has configured",
		Long: `Add the MCP servers of another client: its settings file is read here, with
your rights, and sent to the daemon, which adds the servers Plexus can run and
reports every entry as imported, renamed or skipped, with the reason.

CLIENT reads that client's usual file:
  claude          ~/.claude.json (Claude Code; project servers are reported, not imported)
  claude-desktop  ~/.config/Claude/claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/)
  cursor          ~/.cursor/mcp.json
  vscode          .vscode/mcp.json in this directory
  codex           ~/.codex/config.toml ($CODEX_HOME/config.toml)
  zed             ~/.config/zed/settings.json
  goose           ~/.config/goose/config.yaml
  moltis          ~/.config/moltis/moltis.toml or ~/.moltis/moltis.toml
  claude-project  .mcp.json in this directory (Claude Code's project servers)
  gemini          ~/.gemini/settings.json (Gemini CLI; .gemini/settings.json here first)
  windsurf        ~/.codeium/windsurf/mcp_config.json
  cline           cline_mcp_settings.json in VS Code's storage for Cline
  opencode        opencode.json here, else ~/.config/opencode/opencode.json
  continue        ~/.continue/config.yaml
A FILE's format is told from its name and content, unless --dialect names it.

Secrets are never written in Plexus's settings: every value of the file that
looks like a secret (by its name: TOKEN, KEY, SECRET, PASSWORD, AUTH,
CREDENTIAL…; or its shape: a bearer token, a URL with a password or a key,
a long random word) is moved into the daemon's managed secrets, named
<SERVER>_<KEY>, and the server refers to it by name; only the names are shown.
Other env values (DEBUG=1, a folder, an empty string) stay plain values,
visible and editable, and a relative cwd is taken from the file's folder. A server whose name is taken by a
different server is reported as a conflict and left as it is; importing the
same file again changes nothing.`,
		Example: `  plexus import --dry-run claude
  plexus import claude
  plexus import ./team/mcp.json --dialect cursor
  plexus import vscode --json`,
		Args: exactArgs("FILE or CLIENT"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return importDialects, cobra.ShellCompDirectiveDefault // a client, or a file
		},
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if dialect != "" && !slices.Contains(importDialects, dialect) {
				return usagef("unknown --dialect %q: want one of %s", dialect, strings.Join(importDialects, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path, d, err := importSource(args[0])
			if err != nil {
				return err
			}
			if dialect != "" {
				d = dialect
			}
			content, err := readImportFile(path)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			stop := a.progressAfter("importing %s…", path)
			// The absolute path tells the daemon the file's folder, against
			// which a relative cwd resolves.
			source := path
			if abs, err := filepath.Abs(path); err == nil {
				source = abs
			}
			res, err := c.Import(cmd.Context(), apitype.ImportRequest{Dialect: d, Source: source, Content: string(content), DryRun: dryRun, Sandbox: sandboxed})
			stop()
			if err != nil {
				return fmt.Errorf("importing %s: %w", path, err)
			}
			if asJSON {
				return printJSON(a.stdout(), res)
			}
			a.writeImport(path, res)
			if !sandboxed && importedStdio(res) {
				fmt.Fprintln(a.stdout(), "\nimported stdio servers run with all your rights: `plexus import --sandbox` imports them confined\n(no network, writes only to a private folder; docs/sandbox.md)")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only report what would be imported; change nothing")
	cmd.Flags().StringVar(&dialect, "dialect", "", "the file's `FORMAT`: "+strings.Join(importDialects, ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&sandboxed, "sandbox", false, "give every stdio server the strict sandbox: no network, writes only to its private folder")
	return cmd
}

// importSource resolves the argument: a client's name reads its usual
// file, unless a file of that name is here; anything else is a path.
func importSource(arg string) (path, dialect string, err error) {
	if !slices.Contains(importDialects, arg) {
		return arg, "", nil
	}
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		return arg, "", nil
	}
	candidates, err := clientFiles(arg)
	if err != nil {
		return "", "", err
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p, arg, nil
		}
	}
	return "", "", fmt.Errorf("no %s settings at %s: if they are elsewhere, give the file: plexus import FILE --dialect %s",
		arg, strings.Join(candidates, " or "), arg)
}

// clientFiles lists where a client keeps its MCP servers, most likely first.
func clientFiles(client string) ([]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("cannot find your home directory (%w): give the file's path instead", err)
	}
	config := filepath.Join(home, ".config")
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && runtime.GOOS != "darwin" {
		config = x
	}
	switch client {
	case "claude":
		return []string{filepath.Join(home, ".claude.json")}, nil
	case "claude-desktop":
		switch runtime.GOOS {
		case "darwin":
			return []string{filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")}, nil
		case "windows":
			return []string{filepath.Join(os.Getenv("APPDATA"), "Claude", "claude_desktop_config.json")}, nil
		}
		return []string{filepath.Join(config, "Claude", "claude_desktop_config.json")}, nil
	case "cursor":
		return []string{filepath.Join(home, ".cursor", "mcp.json")}, nil
	case "vscode":
		return []string{filepath.Join(".vscode", "mcp.json")}, nil
	case "codex":
		if ch := os.Getenv("CODEX_HOME"); ch != "" {
			return []string{filepath.Join(ch, "config.toml")}, nil
		}
		return []string{filepath.Join(home, ".codex", "config.toml")}, nil
	case "zed":
		return []string{filepath.Join(config, "zed", "settings.json")}, nil
	case "goose":
		return []string{filepath.Join(config, "goose", "config.yaml")}, nil
	case "moltis":
		return []string{filepath.Join(config, "moltis", "moltis.toml"), filepath.Join(home, ".moltis", "moltis.toml")}, nil
	case "claude-project":
		return []string{".mcp.json"}, nil
	case "gemini":
		return []string{filepath.Join(".gemini", "settings.json"), filepath.Join(home, ".gemini", "settings.json")}, nil
	case "windsurf":
		return []string{filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")}, nil
	case "cline":
		return []string{filepath.Join(vscodeStorage(home, config), "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")}, nil
	case "opencode":
		return []string{"opencode.json", "opencode.jsonc", filepath.Join(config, "opencode", "opencode.json"), filepath.Join(config, "opencode", "opencode.jsonc")}, nil
	case "continue":
		return []string{filepath.Join(home, ".continue", "config.yaml")}, nil
	}
	return nil, fmt.Errorf("no usual file known for %s: give the file's path", client)
}

// vscodeStorage is VS Code's folder for its extensions' global storage.
func vscodeStorage(home, config string) string {
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Code", "User", "globalStorage")
	case "windows":
		return filepath.Join(os.Getenv("APPDATA"), "Code", "User", "globalStorage")
	}
	return filepath.Join(config, "Code", "User", "globalStorage")
}

// readImportFile reads the user's file, refusing what is not one.
func readImportFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no file %s: give the path of a settings file, or a client: %s", path, strings.Join(importDialects, ", "))
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: give the settings file in it", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxImportFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxImportFile {
		return nil, fmt.Errorf("%s is larger than %d MiB: is it a settings file?", path, maxImportFile>>20)
	}
	return b, nil
}

// writeImport prints the report for people: one line per entry with what
// changed on the way in below it, then the secrets moved (names only), the
// variables still missing, and what to do next.
func (a *app) writeImport(path string, res *apitype.ImportResult) {
	w := a.stdout()
	if res.DryRun {
		fmt.Fprintf(w, "dry run: nothing was changed; importing %s (%s) would do this:\n\n", sanitize(path), sanitize(res.Dialect))
	} else {
		fmt.Fprintf(w, "imported %s (%s):\n\n", sanitize(path), sanitize(res.Dialect))
	}
	if len(res.Entries) == 0 {
		fmt.Fprintln(w, "the file has no MCP servers")
	}
	for _, e := range res.Entries {
		fmt.Fprintln(w, importLine(e, res.DryRun))
		if e.Result == apitype.ImportUnchanged {
			continue // its notes told the story when it was added
		}
		for _, n := range e.Notes {
			fmt.Fprintf(w, "    %s\n", oneLine(n))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", oneLine(n))
	}
	verb := "moved into"
	if res.DryRun {
		verb = "to move into"
	}
	if len(res.SecretsSet) > 0 {
		fmt.Fprintf(w, "\nsecrets %s the managed store (names only): %s\n", verb, sanitize(strings.Join(res.SecretsSet, ", ")))
	}
	if len(res.SecretsKept) > 0 {
		fmt.Fprintf(w, "secrets already stored with the same value: %s\n", sanitize(strings.Join(res.SecretsKept, ", ")))
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(w, "variables not set yet: %s\n", sanitize(strings.Join(res.Missing, ", ")))
	}
	if !res.DryRun && len(res.Added) == 0 && len(res.SecretsSet) == 0 {
		fmt.Fprintf(w, "\nnothing changed (revision %d)\n", res.Revision)
	}

	var next []string
	for _, m := range res.Missing {
		next = append(next, "plexus secret set "+sanitize(m))
	}
	switch {
	case res.DryRun && countImported(res) > 0:
		next = append(next, "plexus import "+shellQuote(path)+" (without --dry-run)")
	case len(res.Added) > 0:
		next = append(next, "plexus ls  (the new servers start in the background)")
	}
	if len(res.Conflicts) > 0 {
		next = append(next, "plexus rm NAME, then import again, for a conflict you want replaced")
	}
	if len(next) > 0 {
		fmt.Fprintln(a.stderr(), "\nnext:")
		for _, n := range next {
			fmt.Fprintf(a.stderr(), "  %s\n", n)
		}
	}
}

// importLine is an entry's summary: what happened to it, under which name.
func importLine(e apitype.ImportEntry, dryRun bool) string {
	if e.Action == apitype.ImportSkipped {
		word := "skipped"
		if dryRun {
			word = "would skip"
		}
		return fmt.Sprintf("%s %s: %s", word, oneLine(e.Source), oneLine(e.Reason))
	}
	var line string
	switch e.Result {
	case apitype.ImportUnchanged:
		line = "unchanged " + oneLine(e.Name)
	case apitype.ImportConflict:
		line = fmt.Sprintf("conflict %s: a different server of that name exists; it was kept, not overwritten", oneLine(e.Name))
		if dryRun {
			line = fmt.Sprintf("conflict %s: a different server of that name exists; it would be kept, not overwritten", oneLine(e.Name))
		}
	default:
		line = "added " + oneLine(e.Name)
		if dryRun {
			line = "would add " + oneLine(e.Name)
		}
	}
	if e.Action == apitype.ImportRenamed {
		line += fmt.Sprintf(" (renamed from %q: %s)", oneLine(e.Original), oneLine(e.Reason))
	}
	return line
}

func countImported(res *apitype.ImportResult) int {
	n := 0
	for _, e := range res.Entries {
		if e.Action != apitype.ImportSkipped && e.Result != apitype.ImportConflict {
			n++
		}
	}
	return n
}

// shellQuote quotes a path for a command line shown to people.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-~", r))
	}) {
		return sanitize(s)
	}
	return "'" + strings.ReplaceAll(sanitize(s), "'", `'\''`) + "'"
}

func (a *app) exportCommand() *cobra.Command {
	var asJSON, fullPath bool
	cmd := &cobra.Command{
		Use:   "export CLIENT",
		Short: "Print the snippet that lets another client reach Plexus",
		Long: `Print the settings snippet that registers ` + "`plexus mcp`" + ` in CLIENT, so that the
client reaches every server of Plexus through one entry. CLIENT is one of
` + strings.Join(exportClients, ", ") + `.

The snippet goes to stdout, ready to merge into the file named on stderr;
where the client has a command that adds it, that is shown too.`,
		Example: `  plexus export claude
  plexus export vscode > .vscode/mcp.json
  plexus export claude-desktop --full-path`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs("CLIENT")(cmd, args); err != nil {
				return err
			}
			if !slices.Contains(exportClients, args[0]) {
				return usagef("unknown client %q: want one of %s", args[0], strings.Join(exportClients, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			command := ""
			if fullPath {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("cannot find the path of this program (%w): leave out --full-path", err)
				}
				if p, err := filepath.EvalSymlinks(exe); err == nil {
					exe = p
				}
				command = exe
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := c.Export(cmd.Context(), args[0], command)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout(), s)
			}
			fmt.Fprintf(a.stderr(), "merge this into %s:\n", sanitize(s.Path))
			if _, err := io.WriteString(a.stdout(), sanitize(s.Text)); err != nil {
				return err
			}
			if s.Command != "" {
				fmt.Fprintf(a.stderr(), "or run: %s\n", sanitize(s.Command))
			}
			for _, n := range s.Notes {
				fmt.Fprintf(a.stderr(), "note: %s\n", oneLine(n))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fullPath, "full-path", false, "run this plexus binary by its full path, for clients started without your shell's PATH")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the snippet, its file and the command as JSON")
	return cmd
}

// importedStdio reports whether the import added servers: the report does
// not say which are stdio, so the sandbox is offered for any.
func importedStdio(res *apitype.ImportResult) bool {
	for _, e := range res.Entries {
		if e.Result == apitype.ImportAdded {
			return true
		}
	}
	return false
}
