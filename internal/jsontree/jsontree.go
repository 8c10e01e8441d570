// Package jsontree parses JSON from outside (a settings file, another
// client's configuration) into a generic tree that keeps what
// encoding/json's decoding into structs loses: the document order of keys,
// repeated keys (encoding/json silently keeps the last one) and where each
// key and value starts, so that the walkers of config and importer can
// report every problem at its place.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Kind is the JSON type of a Node.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Node is one JSON value.
type Node struct {
	Kind    Kind
	Bool    bool
	Text    string // a string's value or a number's literal
	Elems   []*Node
	Members []Member // in document order
	// Offset is a byte of the value, enough to tell its line: the opening
	// bracket of an array or object, the last byte of anything else.
	Offset int
}

// Member is one key and its value in an object.
type Member struct {
	Key    string
	Val    *Node
	Offset int  // of the key's closing quote
	Dup    bool // an earlier member of the object has the same key
}

// SyntaxError is input that is not one JSON value. Msg names at most one
// character of the input, never a value, so that it can be shown even when
// the input holds a secret.
type SyntaxError struct {
	Offset int // where the problem is, in bytes from the start
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Parse returns the tree of data, which must hold one JSON value and
// nothing but whitespace after it, nested at most maxDepth levels deep
// (hostile input must not cost deep recursion). Its errors are
// *SyntaxError.
func Parse(data []byte, maxDepth int) (*Node, error) {
	p := &parser{dec: json.NewDecoder(bytes.NewReader(data)), data: data, maxDepth: maxDepth}
	p.dec.UseNumber()
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	end := int(p.dec.InputOffset())
	if rest := skipSpace(data[end:]); len(rest) > 0 {
		return nil, p.fail(len(data)-len(rest), "trailing data after the top-level value")
	}
	return root, nil
}

type parser struct {
	dec      *json.Decoder
	data     []byte
	maxDepth int
}

// start is the offset of the token just read.
func (p *parser) start() int { return max(0, int(p.dec.InputOffset())-1) }

func (p *parser) value(depth int) (*Node, error) {
	if depth > p.maxDepth {
		return nil, p.fail(int(p.dec.InputOffset()), fmt.Sprintf("nested more than %d levels deep", p.maxDepth))
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	at := p.start()
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return p.object(depth, at)
		}
		if t == '[' {
			return p.array(depth, at)
		}
	case string:
		return &Node{Kind: String, Text: t, Offset: at}, nil
	case json.Number:
		return &Node{Kind: Number, Text: string(t), Offset: at}, nil
	case bool:
		return &Node{Kind: Bool, Bool: t, Offset: at}, nil
	case nil:
		return &Node{Kind: Null, Offset: at}, nil
	}
	// Token validates the structure, so this is unreachable; fail closed.
	return nil, p.fail(at, "unexpected token")
}

func (p *parser) object(depth, at int) (*Node, error) {
	n := &Node{Kind: Object, Offset: at}
	seen := make(map[string]bool)
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.syntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, p.fail(int(p.dec.InputOffset()), "object key must be a string")
		}
		kat := p.start()
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Members = append(n.Members, Member{Key: key, Val: val, Offset: kat, Dup: seen[key]})
		seen[key] = true
	}
	return n, p.close()
}

func (p *parser) array(depth, at int) (*Node, error) {
	n := &Node{Kind: Array, Offset: at}
	for p.dec.More() {
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, val)
	}
	return n, p.close()
}

// close consumes the '}' or ']' that More saw, or reports why it is missing.
func (p *parser) close() error {
	if _, err := p.dec.Token(); err != nil {
		return p.syntax(err)
	}
	return nil
}

func (p *parser) syntax(err error) error {
	// The decoder's offsets are relative to the value it was reading, so the
	// error is located by checking the whole input again, which happens only
	// for input that is already known to be broken.
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The decoder reports io.EOF even in the middle of an object.
		return p.fail(len(p.data), "unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(p.data, new(json.RawMessage)), &se) && !strings.HasPrefix(se.Error(), "unexpected end") {
		return p.fail(int(se.Offset)-1, se.Error()) // Offset counts the bad byte
	}
	return p.fail(int(p.dec.InputOffset()), err.Error())
}

func (p *parser) fail(off int, msg string) *SyntaxError {
	return &SyntaxError{Offset: max(0, min(off, len(p.data))), Msg: msg}
}

// skipSpace drops leading JSON whitespace (which is narrower than Unicode's).
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// IsBlank reports whether data holds nothing but JSON whitespace.
func IsBlank(data []byte) bool { return len(skipSpace(data)) == 0 }
