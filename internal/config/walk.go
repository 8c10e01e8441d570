package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The generic steps of the schema walk: objects, scalars, unknown keys.

// object walks an object's members, reporting duplicates, and unknown keys
// (those field declines), with a suggestion from known.
func (d *decoder) object(path string, n *node, known []string, field func(key, path string, v *node) bool) {
	if n.kind != objectKind {
		if path == "" {
			d.add("", "the top-level value must be an object, got "+n.kind.String())
		} else {
			d.wrongType(path, "an object", n)
		}
		return
	}
	for _, m := range n.members {
		p := KeyPath(path, m.key)
		if m.dup {
			d.add(p, "duplicate key")
			continue
		}
		if !field(m.key, p, m.val) {
			d.add(p, unknownKey(path, m.key, known))
		}
	}
}

func decodeMap[T any](d *decoder, path string, n *node, elem func(string, *node) T) map[string]T {
	m := make(map[string]T)
	d.object(path, n, nil, func(key, p string, v *node) bool {
		// A bad entry is still entered, as a zero value, so that references
		// to it (a profile's servers) do not raise a second problem.
		m[key] = elem(p, v)
		return true
	})
	if len(m) == 0 {
		return nil
	}
	return m
}

func (d *decoder) wrongType(path, want string, n *node) {
	d.add(path, fmt.Sprintf("want %s, got %s", want, n.kind))
}

func (d *decoder) str(path string, n *node) string {
	if n.kind != stringKind {
		d.wrongType(path, "a string", n)
	}
	return n.text
}

func (d *decoder) strs(path string, n *node) []string {
	if n.kind != arrayKind {
		d.wrongType(path, "an array of strings", n)
		return nil
	}
	var out []string
	for i, e := range n.elems {
		out = append(out, d.str(IndexPath(path, i), e))
	}
	return out
}

func (d *decoder) boolean(path string, n *node) bool {
	if n.kind != boolKind {
		d.wrongType(path, "true or false", n)
	}
	return n.boolean
}

func (d *decoder) boolPtr(path string, n *node) *bool {
	b := d.boolean(path, n)
	return &b
}

func (d *decoder) int(path string, n *node) int {
	return int(d.integer(path, n, strconv.IntSize))
}

// integer accepts only integer literals: 1.0 and 1e3 are refused rather than
// rounded, as encoding/json does for integer fields. Signs are Validate's.
func (d *decoder) integer(path string, n *node, bits int) int64 {
	if n.kind != numberKind {
		d.wrongType(path, "a number", n)
		return 0
	}
	v, err := strconv.ParseInt(n.text, 10, bits)
	if errors.Is(err, strconv.ErrRange) {
		d.add(path, "number out of range")
		return 0
	}
	if err != nil {
		d.add(path, "want an integer, got "+shorten(n.text))
		return 0
	}
	return v
}

// unknownKey explains an unknown key, suggesting the known key that differs
// only in case or separators: retry_ms and allow_write are what people coming
// from other tools write.
func unknownKey(parent, key string, known []string) string {
	if parent == "" && key == "mcpServers" {
		return `unknown key (servers go under "mcp.servers"; plexus import reads other tools' files)`
	}
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	for _, k := range known {
		if fold(k) == fold(key) {
			return fmt.Sprintf("unknown key (did you mean %q?)", k)
		}
	}
	return "unknown key"
}

// The known keys come from the json tags, so that suggestions cannot drift
// from the schema.
var (
	fileKeys     = jsonKeys[File]()
	mcpKeys      = jsonKeys[MCP]()
	serverKeys   = jsonKeys[Server]()
	oauthKeys    = jsonKeys[OAuth]()
	faceKeys     = jsonKeys[Face]()
	registryKeys = jsonKeys[Registry]()
	tracingKeys  = jsonKeys[Tracing]()
	auditKeys    = jsonKeys[Audit]()
	profileKeys  = jsonKeys[Profile]()
	teamKeys     = jsonKeys[Team]()
	envKeys      = jsonKeys[Ref]()
)

func jsonKeys[T any]() []string {
	t := reflect.TypeFor[T]()
	var keys []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}
