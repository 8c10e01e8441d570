package clientconf

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// This file edits Codex's config.toml as text: the [mcp_servers.NAME]
// table (and its subtables, like [mcp_servers.NAME.env]) is replaced,
// added at the end or removed; every other line stays as it was.

// tomlHeader matches a table header line and captures its dotted name.
var tomlHeader = regexp.MustCompile(`^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$`)

// tomlKeyParts splits a header's dotted name into its keys, unquoting
// the simple quoted ones.
func tomlKeyParts(name string) []string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return parts
}

// tomlBlock finds the lines of table [mcp_servers.name] and its subtables:
// [from, to) in lines; found is false if there is no such header.
func tomlBlock(lines []string, table []string) (from, to int, found bool) {
	inside := false
	for i, line := range lines {
		m := tomlHeader.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(strings.TrimSpace(line), "[[") {
			continue
		}
		parts := tomlKeyParts(m[1])
		ours := len(parts) >= len(table) && strings.Join(parts[:len(table)], "\x00") == strings.Join(table, "\x00")
		switch {
		case ours && !inside:
			from, inside, found = i, true, true
		case !ours && inside:
			return from, trimBlankTail(lines, from, i), true
		}
	}
	if inside {
		return from, trimBlankTail(lines, from, len(lines)), true
	}
	return 0, 0, false
}

// trimBlankTail moves the end of a block back over the blank lines and
// comments before the next table, which belong to what follows.
func trimBlankTail(lines []string, from, to int) int {
	for to > from+1 {
		t := strings.TrimSpace(lines[to-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		to--
	}
	return to
}

// tomlServers decodes the mcp_servers table.
func tomlServers(src []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(src), &doc); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	servers, _ := doc["mcp_servers"].(map[string]any)
	return servers, nil
}

func setTOML(src []byte, name string, block string) ([]byte, error) {
	servers, err := tomlServers(src)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	from, to, found := tomlBlock(lines, []string{"mcp_servers", name})
	if !found {
		if _, ok := servers[name]; ok {
			return nil, fmt.Errorf("mcp_servers.%s is set in a form this command does not edit (not as a [mcp_servers.%s] table): change or remove it by hand", name, name)
		}
		text := string(src)
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if strings.TrimSpace(text) != "" {
			text += "\n"
		}
		return []byte(text + block), nil
	}
	return []byte(strings.Join(lines[:from], "") + block + strings.Join(lines[to:], "")), nil
}

func removeTOML(src []byte, name string) ([]byte, bool, error) {
	servers, err := tomlServers(src)
	if err != nil {
		return nil, false, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	from, to, found := tomlBlock(lines, []string{"mcp_servers", name})
	if !found {
		if _, ok := servers[name]; ok {
			return nil, false, fmt.Errorf("mcp_servers.%s is set in a form this command does not edit: remove it by hand", name)
		}
		return src, false, nil
	}
	// The blank line that set the table apart goes with it.
	if from > 0 && strings.TrimSpace(lines[from-1]) == "" && (to == len(lines) || strings.TrimSpace(lines[to]) == "") {
		from--
	}
	return []byte(strings.Join(lines[:from], "") + strings.Join(lines[to:], "")), true, nil
}
