package clientconf

import (
	"regexp"
	"strconv"
	"strings"
)

// MaskDiff hides the values of the user's own settings in a diff of a
// client's file: keys stay, so the change can be read, but the text of
// strings (tokens pasted into env or headers), unquoted YAML values and
// comments becomes "…" — unless it is one of the values Plexus's own entry
// writes: its command and own (its home and address).
func MaskDiff(diff, command string, own ...string) string {
	if diff == "" {
		return ""
	}
	allowed := map[string]bool{command: true, "mcp": true, "stdio": true, "custom": true, "local": true, EntryName: true}
	for _, o := range own {
		allowed[o] = true
	}
	lines := strings.SplitAfter(diff, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "@@") || line == "" {
			continue
		}
		body, nl := strings.CutSuffix(line[1:], "\n")
		masked := maskLine(body, allowed)
		if nl {
			masked += "\n"
		}
		lines[i] = line[:1] + masked
	}
	return strings.Join(lines, "")
}

// unquotedValue is `key: value` or `key = value` with a bare value.
var unquotedValue = regexp.MustCompile(`^(\s*-?\s*[\w.$-]+\s*[:=]\s+)([^"'\s\[{].*)$`)

func maskLine(s string, allowed map[string]bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			end := i + 1
			for end < len(s) && s[end] != c {
				if s[end] == '\\' && c == '"' {
					end++
				}
				end++
			}
			if end >= len(s) {
				b.WriteString(string(c) + "…")
				return b.String()
			}
			raw := s[i : end+1]
			text := raw[1 : len(raw)-1]
			if c == '"' {
				if u, err := strconv.Unquote(raw); err == nil {
					text = u
				}
			}
			rest := strings.TrimLeft(s[end+1:], " \t")
			if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "=") || allowed[text] || text == "" {
				b.WriteString(raw)
			} else {
				b.WriteString(string(c) + "…" + string(c))
			}
			i = end + 1
		case c == '#' || (c == '/' && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*')):
			marker := s[i : i+1]
			if c == '/' {
				marker = s[i : i+2]
			}
			b.WriteString(marker)
			if strings.TrimSpace(s[i+len(marker):]) != "" {
				b.WriteString(" …")
			}
			return b.String()
		default:
			b.WriteByte(c)
			i++
		}
	}
	out := b.String()
	if m := unquotedValue.FindStringSubmatch(out); m != nil {
		v := strings.TrimSpace(m[2])
		if _, err := strconv.ParseFloat(v, 64); err != nil && !allowed[v] && v != "true" && v != "false" && v != "null" {
			return m[1] + "…"
		}
	}
	return out
}
