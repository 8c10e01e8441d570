package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
)

// obj reads the fields of one object, remembering which keys were read so
// that the rest can be reported, and collecting type problems, which skip
// the entry with their key path and line.
type obj struct {
	n    *node
	path string
	used map[string]bool
	bad  []string
}

func newObj(n *node, path string) *obj {
	return &obj{n: n, path: path, used: make(map[string]bool)}
}

// at is the key path of a member.
func (o *obj) at(key string) string { return config.KeyPath(o.path, key) }

// has reports whether the object has a member named key.
func (o *obj) has(key string) bool { return o.n.get(key) != nil }

// lookup returns the member named key and marks it read; nil if absent or
// null (a null means "not set" in every dialect).
func (o *obj) lookup(key string) (*node, int) {
	o.used[key] = true
	for _, m := range o.n.members {
		if m.key == key && !m.dup {
			if m.val.kind == nullKind {
				return nil, 0
			}
			return m.val, m.line
		}
	}
	return nil, 0
}

func (o *obj) wrong(key string, line int, want string, got *node) {
	o.bad = append(o.bad, locate(o.at(key), line)+": want "+want+", not "+article(got.kind.String()))
}

func (o *obj) str(key string) string {
	v, line := o.lookup(key)
	if v == nil {
		return ""
	}
	if v.kind != stringKind {
		o.wrong(key, line, "a string", v)
		return ""
	}
	return v.text
}

// strs reads an array of strings; present reports whether the key was set.
func (o *obj) strs(key string) (list []string, present bool) {
	v, line := o.lookup(key)
	if v == nil {
		return nil, false
	}
	if v.kind != arrayKind {
		o.wrong(key, line, "an array of strings", v)
		return nil, true
	}
	return o.strsOf(key, v), true
}

// strsOf reads v, the array at key, as strings.
func (o *obj) strsOf(key string, v *node) []string {
	var list []string
	for i, e := range v.elems {
		s, ok := e.scalarText()
		if !ok {
			o.bad = append(o.bad, locate(config.IndexPath(o.at(key), i), e.line)+": want a string, not "+article(e.kind.String()))
			continue
		}
		list = append(list, s)
	}
	return list
}

// kv is one entry of a string map.
type kv struct {
	key, val string
	line     int
}

// strMap reads an object of scalars, sorted by key. Numbers and booleans
// are taken as their text, as a process's environment would see them.
func (o *obj) strMap(key string) []kv {
	v, line := o.lookup(key)
	if v == nil {
		return nil
	}
	if v.kind != objectKind {
		o.wrong(key, line, "an object", v)
		return nil
	}
	var out []kv
	for _, m := range v.members {
		if m.dup {
			o.bad = append(o.bad, locate(config.KeyPath(o.at(key), m.key), m.line)+": repeats a key")
			continue
		}
		if m.val.kind == nullKind {
			continue
		}
		s, ok := m.val.scalarText()
		if !ok {
			o.bad = append(o.bad, locate(config.KeyPath(o.at(key), m.key), m.line)+": want a string, not "+article(m.val.kind.String()))
			continue
		}
		out = append(out, kv{key: m.key, val: s, line: m.line})
	}
	slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	return out
}

func (o *obj) boolean(key string) *bool {
	v, line := o.lookup(key)
	if v == nil {
		return nil
	}
	if v.kind != boolKind {
		o.wrong(key, line, "true or false", v)
		return nil
	}
	b := v.boolean
	return &b
}

// number reads a number; ok is false when absent or wrong.
func (o *obj) number(key string) (float64, bool) {
	v, line := o.lookup(key)
	if v == nil {
		return 0, false
	}
	if v.kind != numberKind {
		o.wrong(key, line, "a number", v)
		return 0, false
	}
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil {
		o.wrong(key, line, "a number", v)
		return 0, false
	}
	return f, true
}

// object reads a nested object.
func (o *obj) object(key string) *obj {
	v, line := o.lookup(key)
	if v == nil {
		return nil
	}
	if v.kind != objectKind {
		o.wrong(key, line, "an object", v)
		return nil
	}
	return newObj(v, o.at(key))
}

// rest returns the keys not read, sorted.
func (o *obj) rest() []string {
	var keys []string
	for _, m := range o.n.members {
		if !o.used[m.key] && !slices.Contains(keys, m.key) {
			keys = append(keys, m.key)
		}
	}
	slices.Sort(keys)
	return keys
}

// skipFields reports the keys not read as skipped fields of r, with the
// dialect's reason for the ones it knows and a generic one for the rest.
// cosmetic keys (names and descriptions for display) are dropped without a
// note: they configure nothing.
func (o *obj) skipFields(r *rawServer, reasons map[string]string, cosmetic ...string) {
	for _, m := range o.n.members {
		if m.dup {
			r.note("skipped %s: it repeats a field, and the first one counts", locate(config.KeyPath("", m.key), m.line))
		}
	}
	for _, k := range o.rest() {
		if slices.Contains(cosmetic, k) {
			continue
		}
		why, ok := reasons[k]
		if !ok {
			why = "Plexus has no such setting"
		}
		r.note("skipped field %s: %s", config.KeyPath("", k), why)
	}
}

func locate(path string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s (line %d)", path, line)
	}
	return path
}

func article(word string) string {
	switch word[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + word
	}
	return "a " + word
}
