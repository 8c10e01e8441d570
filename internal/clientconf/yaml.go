package clientconf

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file edits Goose's config.yaml as text: the entry NAME under the
// top-level extensions mapping is replaced, added or removed; every other
// line, comments included, stays as it was.

var yamlTopKey = regexp.MustCompile(`^([A-Za-z0-9_.-]+|"[^"]*"|'[^']*'):(\s.*)?$`)

// yamlExtensions decodes the top-level mapping's extensions.
func yamlExtensions(src []byte) (map[string]any, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	ext, _ := doc["extensions"].(map[string]any)
	return ext, nil
}

func indentWidth(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func blankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// yamlSection finds the top-level key's line and the end of its block.
func yamlSection(lines []string, key string) (head, end int, found bool) {
	head = -1
	for i, line := range lines {
		if m := yamlTopKey.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			if head >= 0 {
				return head, trimYAMLTail(lines, head, i), true
			}
			if strings.Trim(m[1], `"'`) == key {
				head = i
			}
		}
	}
	if head >= 0 {
		return head, trimYAMLTail(lines, head, len(lines)), true
	}
	return 0, 0, false
}

func trimYAMLTail(lines []string, from, to int) int {
	for to > from+1 && blankOrComment(lines[to-1]) {
		to--
	}
	return to
}

// yamlChild finds the entry name in the block (head, end) of a mapping
// whose children are indented by indent: [from, to) in lines.
func yamlChild(lines []string, head, end, indent int, name string) (from, to int, found bool) {
	from = -1
	for i := head + 1; i < end; i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if blankOrComment(line) || indentWidth(line) > indent {
			continue
		}
		if from >= 0 {
			return from, trimYAMLTail(lines, from, i), true
		}
		key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if strings.Trim(key, `"'`) == name {
			from = i
		}
	}
	if from >= 0 {
		return from, trimYAMLTail(lines, from, end), true
	}
	return 0, 0, false
}

// childIndent is the indentation of the section's entries, 2 if it has
// none yet.
func childIndent(lines []string, head, end int) int {
	for i := head + 1; i < end; i++ {
		if !blankOrComment(lines[i]) {
			return indentWidth(lines[i])
		}
	}
	return 2
}

// indentBlock indents every line of block by n spaces.
func indentBlock(block string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(block, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// setYAML sets extensions.name to block (the entry's lines, unindented,
// starting with "name:").
func setYAML(src []byte, name, block string) ([]byte, error) {
	ext, err := yamlExtensions(src)
	if err != nil {
		return nil, err
	}
	text := string(src)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	lines := strings.SplitAfter(text, "\n")
	head, end, found := yamlSection(lines, "extensions")
	if !found {
		return []byte(text + "extensions:\n" + indentBlock(block, 2)), nil
	}
	_, rest, _ := strings.Cut(strings.TrimRight(lines[head], "\r\n"), ":")
	if rest = strings.TrimSpace(rest); rest != "" && !strings.HasPrefix(rest, "#") {
		if rest != "{}" && rest != "null" && rest != "~" {
			return nil, fmt.Errorf("extensions is written inline; change it to a block (one entry a line) to let this command edit it")
		}
		lines[head] = "extensions:\n"
	}
	indent := childIndent(lines, head, end)
	if from, to, ok := yamlChild(lines, head, end, indent, name); ok {
		return []byte(strings.Join(lines[:from], "") + indentBlock(block, indent) + strings.Join(lines[to:], "")), nil
	}
	if _, ok := ext[name]; ok {
		return nil, fmt.Errorf("extensions.%s is set in a form this command does not edit: change it by hand", name)
	}
	return []byte(strings.Join(lines[:end], "") + indentBlock(block, indent) + strings.Join(lines[end:], "")), nil
}

func removeYAML(src []byte, name string) ([]byte, bool, error) {
	ext, err := yamlExtensions(src)
	if err != nil {
		return nil, false, err
	}
	if _, ok := ext[name]; !ok {
		return src, false, nil
	}
	lines := strings.SplitAfter(string(src), "\n")
	head, end, _ := yamlSection(lines, "extensions")
	from, to, ok := yamlChild(lines, head, end, childIndent(lines, head, end), name)
	if !ok {
		return nil, false, fmt.Errorf("extensions.%s is set in a form this command does not edit: remove it by hand", name)
	}
	return []byte(strings.Join(lines[:from], "") + strings.Join(lines[to:], "")), true, nil
}
