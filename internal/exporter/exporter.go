// Package exporter writes the snippet that registers `plexus mcp` — Plexus
// as one stdio MCP server (R-FACE-1) — in another client's settings:
// the text to paste, the file it goes in, and the client's own command
// that adds it, where there is one. It is pure text generation.
package exporter

import (
	"fmt"
	"strings"
)

// Clients that Export writes for.
const (
	Claude        = "claude"
	ClaudeDesktop = "claude-desktop"
	Cursor        = "cursor"
	VSCode        = "vscode"
	Codex         = "codex"
	Zed           = "zed"
	Goose         = "goose"
	Gemini        = "gemini"
)

// Clients lists the clients Export knows, sorted.
func Clients() []string {
	return []string{Claude, ClaudeDesktop, Codex, Cursor, Gemini, Goose, VSCode, Zed}
}

// Snippet is what registers Plexus in one client.
type Snippet struct {
	Client string
	// Path is the file the text goes in, ~ for the home directory.
	Path string
	// Format is the text's format: json, toml or yaml.
	Format string
	// Text is the entry to merge into the file (or the whole file, if it
	// does not exist yet).
	Text string
	// Command registers Plexus through the client's own command line
	// instead, where the client has one.
	Command string
	Notes   []string
}

// Options shape the snippet.
type Options struct {
	// Command is how the client starts Plexus: "plexus" when it is on
	// the client's PATH, else the binary's full path.
	Command string
	// GOOS picks the file locations that differ between systems.
	GOOS string
}

// ErrUnknownClient is returned for a client Export does not know.
type ErrUnknownClient struct{ Client string }

func (e *ErrUnknownClient) Error() string {
	return fmt.Sprintf("unknown client %q: want one of %s", shorten(e.Client), strings.Join(Clients(), ", "))
}

// Export returns the snippet for client.
func Export(client string, o Options) (*Snippet, error) {
	cmd := o.Command
	if cmd == "" {
		cmd = "plexus"
	}
	q := jsonString(cmd)
	s := &Snippet{Client: client, Format: "json"}
	switch client {
	case Claude:
		s.Path = "~/.claude.json"
		s.Text = fmt.Sprintf(`{
  "mcpServers": {
    "plexus": {
      "type": "stdio",
      "command": %s,
      "args": ["mcp"]
    }
  }
}
`, q)
		s.Command = "claude mcp add --scope user plexus -- " + shellWord(cmd) + " mcp"
		s.Notes = []string{"the command is the simplest way; the same entry in a project's .mcp.json shares it with the project"}
	case ClaudeDesktop:
		s.Path = "~/.config/Claude/claude_desktop_config.json"
		switch o.GOOS {
		case "darwin":
			s.Path = "~/Library/Application Support/Claude/claude_desktop_config.json"
		case "windows":
			s.Path = `%APPDATA%\Claude\claude_desktop_config.json`
		}
		s.Text = mcpServersJSON(q)
		s.Notes = []string{"restart Claude Desktop after editing the file"}
	case Cursor:
		s.Path = "~/.cursor/mcp.json"
		s.Text = mcpServersJSON(q)
		s.Notes = []string{"a project's .cursor/mcp.json works too, for that project only"}
	case VSCode:
		s.Path = ".vscode/mcp.json"
		s.Text = fmt.Sprintf(`{
  "servers": {
    "plexus": {
      "type": "stdio",
      "command": %s,
      "args": ["mcp"]
    }
  }
}
`, q)
		s.Command = "code --add-mcp " + shellWord(fmt.Sprintf(`{"name":"plexus","command":%s,"args":["mcp"]}`, q))
		s.Notes = []string{"the file is the workspace's; `code --add-mcp` adds Plexus to your user profile instead"}
	case Codex:
		s.Path = "~/.codex/config.toml"
		s.Format = "toml"
		s.Text = fmt.Sprintf("[mcp_servers.plexus]\ncommand = %s\nargs = [\"mcp\"]\n", q)
		s.Command = "codex mcp add plexus -- " + shellWord(cmd) + " mcp"
	case Zed:
		s.Path = "~/.config/zed/settings.json"
		if o.GOOS == "windows" {
			s.Path = `%APPDATA%\Zed\settings.json`
		}
		s.Text = fmt.Sprintf(`{
  "context_servers": {
    "plexus": {
      "source": "custom",
      "command": %s,
      "args": ["mcp"],
      "env": {}
    }
  }
}
`, q)
		s.Notes = []string{"merge context_servers into the settings you have; Zed reloads them by itself"}
	case Goose:
		s.Path = "~/.config/goose/config.yaml"
		if o.GOOS == "windows" {
			s.Path = `%APPDATA%\Block\goose\config\config.yaml`
		}
		s.Format = "yaml"
		s.Text = fmt.Sprintf(`extensions:
  plexus:
    type: stdio
    name: plexus
    enabled: true
    cmd: %s
    args: [mcp]
    envs: {}
    env_keys: []
    timeout: 300
`, q)
		s.Notes = []string{"merge the plexus entry into the extensions you have; `goose configure` can add it interactively too"}
	case Gemini:
		s.Path = "~/.gemini/settings.json"
		s.Text = GeminiSettings(map[string]GeminiServer{"plexus": {Type: "stdio", Command: cmd, Args: []string{"mcp"}}})
		s.Command = "gemini mcp add --scope user plexus " + shellWord(cmd) + " mcp"
		s.Notes = []string{"merge mcpServers into the settings you have; a project's .gemini/settings.json works too, for that project only"}
	default:
		return nil, &ErrUnknownClient{Client: client}
	}
	if o.Command != "" && o.Command != "plexus" {
		s.Notes = append(s.Notes, "the command is Plexus's full path, for clients started without your shell's PATH")
	}
	return s, nil
}

// jsonString quotes s for JSON, TOML and YAML alike: a double-quoted string
// with \" and \\ escaped, which all three read the same way.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// mcpServersJSON is the "mcpServers" file that Claude Desktop and Cursor
// share, registering `plexus mcp`; q is the command, already JSON-quoted.
func mcpServersJSON(q string) string {
	return fmt.Sprintf(`{
  "mcpServers": {
    "plexus": {
      "command": %s,
      "args": ["mcp"]
    }
  }
}
`, q)
}
