package importer

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/plexus-mcp/plexus/internal/jsontree"
)

// The three formats are read into one generic tree, so that each dialect is
// walked by the same code whatever its syntax. The tree keeps what the
// report and the errors need: the document order of keys (TOML, read
// through a map, comes sorted instead), repeated keys, and the line of each
// value where the decoder knows it.

// kind is jsontree.Kind, in the same order, and one more.
type kind uint8

const (
	nullKind kind = iota
	boolKind
	numberKind
	stringKind
	arrayKind
	objectKind
	otherKind // TOML dates and times, YAML tags we do not know
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object", "date or other value"}[k]
}

type node struct {
	kind    kind
	text    string // a string's value, a number's literal
	boolean bool
	elems   []*node
	members []member // in document order
	line    int      // from 1; 0 when the decoder does not say
}

type member struct {
	key  string
	val  *node
	line int
	dup  bool // an earlier member has the same key
}

// get returns the value of the first member named key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != objectKind {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// scalarText is the text of a string, number or boolean: env values written
// as PORT = 8080 mean the text "8080" to the process that gets them.
func (n *node) scalarText() (string, bool) {
	switch n.kind {
	case stringKind, numberKind:
		return n.text, true
	case boolKind:
		return strconv.FormatBool(n.boolean), true
	}
	return "", false
}

// maxDepth bounds nesting: the settings are a few levels deep, and the
// limit keeps hostile input from costing deep recursion.
const maxDepth = 200

// maxNodes bounds the tree built from YAML, where aliases can make a small
// document stand for a huge one.
const maxNodes = 1 << 20

// decodeError is a file that cannot be read as its format at all.
func decodeError(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ---- JSON, with the comments and trailing commas of JSONC ----

func parseJSON(data []byte) (*node, error) {
	data = stripJSONC(bytes.TrimPrefix(data, []byte("\uFEFF")))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, decodeError(0, "the file is empty")
	}
	lines := lineStarts(data)
	root, err := jsontree.Parse(data, maxDepth)
	var se *jsontree.SyntaxError
	if errors.As(err, &se) {
		return nil, decodeError(lineAt(lines, se.Offset), "invalid JSON: %s", se.Msg)
	}
	if err != nil {
		return nil, decodeError(0, "invalid JSON")
	}
	return fromTree(root, lines), nil
}

// fromTree converts the parsed tree into the walkers' nodes, with lines.
func fromTree(t *jsontree.Node, lines []int) *node {
	n := &node{kind: kind(t.Kind), boolean: t.Bool, text: t.Text, line: lineAt(lines, t.Offset)}
	for _, e := range t.Elems {
		n.elems = append(n.elems, fromTree(e, lines))
	}
	for _, m := range t.Members {
		n.members = append(n.members, member{key: m.Key, val: fromTree(m.Val, lines), line: lineAt(lines, m.Offset), dup: m.Dup})
	}
	return n
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineAt is the line, from 1, of byte offset off.
func lineAt(lines []int, off int) int {
	return sort.Search(len(lines), func(i int) bool { return lines[i] > off })
}

// stripJSONC blanks out // and /* */ comments and the commas that end a
// list or an object, as Zed and VS Code allow in their settings. Every byte
// keeps its offset and every line break stays, so that lines still count.
func stripJSONC(data []byte) []byte {
	if !bytes.ContainsAny(data, "/,") {
		return data
	}
	out := bytes.Clone(data)
	comma := -1 // a comma that may turn out to be trailing
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case c == '"':
			comma = -1
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		case c == ',':
			comma = i
		case c == '}' || c == ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			comma = -1
		}
	}
	return out
}

// ---- TOML ----

func parseTOML(data []byte) (*node, error) {
	var m map[string]any
	if _, err := toml.Decode(string(bytes.TrimPrefix(data, []byte("\uFEFF"))), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, decodeError(pe.Position.Line, "invalid TOML: %s", withoutQuoted(pe.Message))
		}
		return nil, decodeError(0, "invalid TOML: %s", withoutQuoted(err.Error()))
	}
	return fromAny(m, 0), nil
}

// fromAny converts what the TOML decoder returns. Map keys come sorted: the
// decoder does not keep their order.
func fromAny(v any, depth int) *node {
	if depth > maxDepth {
		return &node{kind: otherKind}
	}
	switch t := v.(type) {
	case nil:
		return &node{kind: nullKind}
	case string:
		return &node{kind: stringKind, text: t}
	case bool:
		return &node{kind: boolKind, boolean: t}
	case int64:
		return &node{kind: numberKind, text: strconv.FormatInt(t, 10)}
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return &node{kind: otherKind}
		}
		return &node{kind: numberKind, text: strconv.FormatFloat(t, 'g', -1, 64)}
	case map[string]any:
		n := &node{kind: objectKind}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n.members = append(n.members, member{key: k, val: fromAny(t[k], depth+1)})
		}
		return n
	case []map[string]any:
		n := &node{kind: arrayKind}
		for _, e := range t {
			n.elems = append(n.elems, fromAny(e, depth+1))
		}
		return n
	case []any:
		n := &node{kind: arrayKind}
		for _, e := range t {
			n.elems = append(n.elems, fromAny(e, depth+1))
		}
		return n
	}
	// Dates and times: no dialect has a use for them.
	return &node{kind: otherKind}
}

// ---- YAML ----

var yamlLine = regexp.MustCompile(`line (\d+)`)

func parseYAML(data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		msg = strings.TrimPrefix(msg, "yaml: ")
		msg = yamlLine.ReplaceAllString(msg, "")
		msg = strings.TrimLeft(msg, ": ")
		return nil, decodeError(line, "invalid YAML: %s", withoutQuoted(msg))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, decodeError(0, "the file is empty")
	}
	budget := maxNodes
	n := fromYAML(doc.Content[0], 0, &budget)
	if budget < 0 {
		return nil, decodeError(0, "invalid YAML: the document expands to more than %d values (aliases)", maxNodes)
	}
	return n, nil
}

func fromYAML(y *yaml.Node, depth int, budget *int) *node {
	*budget--
	if *budget < 0 || depth > maxDepth || y == nil {
		return &node{kind: otherKind}
	}
	switch y.Kind {
	case yaml.AliasNode:
		return fromYAML(y.Alias, depth+1, budget)
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return &node{kind: nullKind, line: y.Line}
		}
		return fromYAML(y.Content[0], depth+1, budget)
	case yaml.MappingNode:
		n := &node{kind: objectKind, line: y.Line}
		seen := make(map[string]bool)
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			for k.Kind == yaml.AliasNode && k.Alias != nil && depth < maxDepth {
				k = k.Alias
			}
			key := k.Value
			if k.Kind != yaml.ScalarNode {
				key = "?" // a complex key, which no dialect has
			}
			n.members = append(n.members, member{key: key, val: fromYAML(v, depth+1, budget), line: k.Line, dup: seen[key]})
			seen[key] = true
		}
		return n
	case yaml.SequenceNode:
		n := &node{kind: arrayKind, line: y.Line}
		for _, e := range y.Content {
			n.elems = append(n.elems, fromYAML(e, depth+1, budget))
		}
		return n
	case yaml.ScalarNode:
		n := &node{line: y.Line, text: y.Value}
		switch y.ShortTag() {
		case "!!null":
			n.kind = nullKind
		case "!!bool":
			var b bool
			if y.Decode(&b) == nil {
				n.kind, n.boolean = boolKind, b
			} else {
				n.kind = stringKind
			}
		case "!!int", "!!float":
			n.kind = numberKind
		case "!!str", "!!binary":
			n.kind = stringKind
		default:
			n.kind = otherKind
		}
		return n
	}
	return &node{kind: otherKind, line: y.Line}
}

// quoted matches what decoders quote from the input in their messages.
var quoted = regexp.MustCompile("'[^']*'|\"[^\"]*\"|`[^`]*`")

// withoutQuoted drops the parts of a decoder's message that quote the
// input: the input may hold secrets, and an error must not repeat them.
func withoutQuoted(msg string) string {
	msg = quoted.ReplaceAllString(msg, "…")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}
