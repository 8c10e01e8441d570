package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The decoder works in two steps: parse the JSON into a generic tree that
// keeps duplicate keys (encoding/json silently keeps the last one), then walk
// the tree against the schema. Walking by hand, rather than using
// DisallowUnknownFields, lets us report every problem instead of the first.

type kind uint8

const (
	nullKind kind = iota
	boolKind
	numberKind
	stringKind
	arrayKind
	objectKind
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

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

type parser struct {
	dec  *json.Decoder
	data []byte
}

// parse returns the tree of data, or the one problem that makes it malformed
// JSON. data must not be empty.
func parse(data []byte) (*node, *Problem) {
	p := &parser{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	p.dec.UseNumber()
	root, prob := p.value(0)
	if prob != nil {
		return nil, prob
	}
	end := int(p.dec.InputOffset())
	if rest := skipSpace(data[end:]); len(rest) > 0 {
		return nil, p.problem(len(data)-len(rest), "unexpected data after the top-level value")
	}
	return root, nil
}

func (p *parser) value(depth int) (*node, *Problem) {
	if depth > maxDepth {
		return nil, p.problem(int(p.dec.InputOffset()), fmt.Sprintf("nested more than %d levels deep", maxDepth))
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return p.object(depth)
		}
		if t == '[' {
			return p.array(depth)
		}
	case string:
		return &node{kind: stringKind, text: t}, nil
	case json.Number:
		return &node{kind: numberKind, text: string(t)}, nil
	case bool:
		return &node{kind: boolKind, boolean: t}, nil
	case nil:
		return &node{kind: nullKind}, nil
	}
	// Token validates the structure, so this is unreachable; fail closed.
	return nil, p.problem(int(p.dec.InputOffset()), fmt.Sprintf("unexpected %v", tok))
}

func (p *parser) object(depth int) (*node, *Problem) {
	n := &node{kind: objectKind}
	seen := make(map[string]bool)
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, p.problem(int(p.dec.InputOffset()), "object key must be a string")
		}
		val, prob := p.value(depth + 1)
		if prob != nil {
			return nil, prob
		}
		n.members = append(n.members, member{key: key, val: val, dup: seen[key]})
		seen[key] = true
	}
	return n, p.close()
}

func (p *parser) array(depth int) (*node, *Problem) {
	n := &node{kind: arrayKind}
	for p.dec.More() {
		val, prob := p.value(depth + 1)
		if prob != nil {
			return nil, prob
		}
		n.elems = append(n.elems, val)
	}
	return n, p.close()
}

// close consumes the '}' or ']' that More saw, or reports why it is missing.
func (p *parser) close() *Problem {
	if _, err := p.dec.Token(); err != nil {
		return p.syntax(err)
	}
	return nil
}

func (p *parser) syntax(err error) *Problem {
	// The decoder's offsets are relative to the value it was reading, so the
	// error is located by checking the whole input again, which happens only
	// for input that is already known to be broken.
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The decoder reports io.EOF even in the middle of an object.
		return p.problem(len(p.data), "unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(p.data, new(json.RawMessage)), &se) && !strings.HasPrefix(se.Error(), "unexpected end") {
		return p.problem(int(se.Offset)-1, se.Error()) // Offset counts the bad byte
	}
	return p.problem(int(p.dec.InputOffset()), err.Error())
}

// problem places msg at byte offset off as line:column, both from 1, the
// column counted in characters.
func (p *parser) problem(off int, msg string) *Problem {
	off = max(0, min(off, len(p.data)))
	before := p.data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return &Problem{Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)}
}

// skipSpace drops leading JSON whitespace (which is narrower than Unicode's).
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
