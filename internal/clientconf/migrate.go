package clientconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// After an import, the client's own entries that Plexus now serves are
// moved out of its file (`plexus connect CLIENT --yes`), so that the user
// has one source of truth and no secret left inline; `plexus disconnect`
// puts them back. What was moved is kept beside the file in
// FILE.plexus-moved (0600, like a backup: it holds the entries' secrets
// until they are put back).

// movedSuffix names the file that records a migration beside the client's.
const movedSuffix = ".plexus-moved"

// Moved is what a migration took out of a client's file.
type Moved struct {
	Client string   `json:"client"`
	Names  []string `json:"names"`
	// Before is the file before the connect that moved them, After the
	// file that connect wrote: a disconnect that finds After gives
	// Before back byte for byte.
	Before string `json:"before"`
	After  string `json:"after"`
}

// Remove returns src without the client's entries names (never Plexus's
// own): the rest of the file stays as it was.
func Remove(name string, src []byte, names []string) ([]byte, error) {
	c, ok := clients[name]
	if !ok {
		return nil, &UnknownClientError{Client: name}
	}
	out := src
	for _, n := range names {
		if n == EntryName {
			continue
		}
		var err error
		switch c.format {
		case "toml":
			out, _, err = removeTOML(out, n)
		case "yaml":
			out, _, err = removeYAML(out, n)
		default:
			out, _, err = removeJSON(out, append(slices.Clone(c.keys), n))
		}
		if err != nil {
			return nil, err
		}
	}
	if err := checkRemoved(c, src, out, names); err != nil {
		return nil, fmt.Errorf("taking out %s did not come out right (%v): nothing was written; please report this", strings.Join(names, ", "), err)
	}
	return out, nil
}

// checkRemoved decodes before and after: the names are gone, and all else
// is as it was.
func checkRemoved(c client, before, after []byte, names []string) error {
	b, a, err := decodeBoth(c.format, before, after)
	if err != nil {
		return err
	}
	keys := c.serverKeys()
	for _, n := range names {
		if lookup(a, append(slices.Clone(keys), n)) != nil {
			return fmt.Errorf("%s is still there", n)
		}
		dropAt(b, append(slices.Clone(keys), n))
	}
	prune(a, keys)
	prune(b, keys)
	if !reflect.DeepEqual(a, b) {
		return errors.New("other settings changed")
	}
	return nil
}

func lookup(doc map[string]any, path []string) any {
	var v any = doc
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func dropAt(doc map[string]any, path []string) {
	m := doc
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

// Restore puts the moved entries back into src, which is the file as it
// is now: if it is what the migration wrote, the file before it comes
// back whole; otherwise each moved entry that is not there again is
// added, as it was (its text, for TOML and YAML; its value, for JSON).
func Restore(name string, src []byte, m Moved) ([]byte, error) {
	c, ok := clients[name]
	if !ok {
		return nil, &UnknownClientError{Client: name}
	}
	if string(src) == m.After {
		return []byte(m.Before), nil
	}
	before := []byte(m.Before)
	doc, err := decode(c.format, before)
	if err != nil {
		return nil, err
	}
	out := src
	for _, n := range m.Names {
		now, err := decode(c.format, out)
		if err != nil {
			return nil, err
		}
		path := append(slices.Clone(c.serverKeys()), n)
		if lookup(now, path) != nil {
			continue // the user has one of that name again: theirs stays
		}
		switch c.format {
		case "toml":
			lines := strings.SplitAfter(m.Before, "\n")
			if from, to, found := tomlBlock(lines, []string{"mcp_servers", n}); found {
				out, err = setTOML(out, n, strings.Join(lines[from:to], ""))
			}
		case "yaml":
			lines := strings.SplitAfter(m.Before, "\n")
			head, end, _ := yamlSection(lines, "extensions")
			if from, to, found := yamlChild(lines, head, end, childIndent(lines, head, end), n); found {
				out, err = setYAML(out, n, dedent(strings.Join(lines[from:to], "")))
			}
		default:
			out, err = setJSON(out, append(slices.Clone(c.keys), n), lookup(doc, path))
		}
		if err != nil {
			return nil, fmt.Errorf("putting %s back: %w", n, err)
		}
	}
	return out, nil
}

// dedent takes the common leading spaces off a block of lines.
func dedent(block string) string {
	lines := strings.SplitAfter(block, "\n")
	n := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if w := indentWidth(l); n < 0 || w < n {
			n = w
		}
	}
	for i, l := range lines {
		if len(l) >= n && n > 0 && strings.TrimSpace(l[:n]) == "" {
			lines[i] = l[n:]
		}
	}
	return strings.Join(lines, "")
}

// ReadMoved reads the record of a migration beside path; nil if none.
func ReadMoved(path string) (*Moved, error) {
	b, err := os.ReadFile(path + movedSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Moved
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s%s: %w", path, movedSuffix, err)
	}
	return &m, nil
}

// WriteMoved records a migration beside path, privately.
func WriteMoved(path string, m Moved) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path+movedSuffix, b, 0o600)
}

// ForgetMoved removes the record once the entries are back.
func ForgetMoved(path string) error {
	err := os.Remove(path + movedSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Servers lists the names of the client's own entries in src, Plexus's
// aside.
func Servers(name string, src []byte) ([]string, error) {
	c, ok := clients[name]
	if !ok {
		return nil, &UnknownClientError{Client: name}
	}
	doc, err := decode(c.format, src)
	if err != nil {
		return nil, err
	}
	m, _ := lookup(doc, c.serverKeys()).(map[string]any)
	var out []string
	for n := range m {
		if n != EntryName {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
