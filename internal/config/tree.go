package config

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/plexus-mcp/plexus/internal/jsontree"
)

// The decoder works in two steps: parse the JSON into a generic tree that
// keeps duplicate keys (jsontree: encoding/json silently keeps the last
// one), then walk the tree against the schema. Walking by hand, rather than using
// DisallowUnknownFields, lets us report every problem instead of the first.

type kind = jsontree.Kind

const (
	nullKind   = jsontree.Null
	boolKind   = jsontree.Bool
	numberKind = jsontree.Number
	stringKind = jsontree.String
	arrayKind  = jsontree.Array
	objectKind = jsontree.Object
)

type node struct {
	kind    kind
	boolean bool
	text    string // a string's value or a number's literal
	elems   []*node
	members []member // in document order
}

type member struct {
	key string
	val *node
	dup bool // an earlier member has the same key
}

// maxDepth bounds nesting. A valid file is about five levels deep; the limit
// keeps hostile input from costing deep recursion.
const maxDepth = 64

// parse returns the tree of data, or the one problem that makes it malformed
// JSON. data must not be empty.
func parse(data []byte) (*node, *Problem) {
	root, err := jsontree.Parse(data, maxDepth)
	var se *jsontree.SyntaxError
	if errors.As(err, &se) {
		return nil, problemAt(data, se.Offset, se.Msg)
	}
	if err != nil {
		return nil, &Problem{Message: "invalid JSON: " + err.Error()}
	}
	return fromTree(root), nil
}

// fromTree converts the parsed tree into the walker's nodes.
func fromTree(t *jsontree.Node) *node {
	n := &node{kind: t.Kind, boolean: t.Bool, text: t.Text}
	for _, e := range t.Elems {
		n.elems = append(n.elems, fromTree(e))
	}
	for _, m := range t.Members {
		n.members = append(n.members, member{key: m.Key, val: fromTree(m.Val), dup: m.Dup})
	}
	return n
}

// problemAt places msg at byte offset off of data as line:column, both from
// 1, the column counted in characters.
func problemAt(data []byte, off int, msg string) *Problem {
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return &Problem{Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)}
}
