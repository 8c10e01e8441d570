package clientconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file edits JSON and JSON with comments (JSONC: // and /* */
// comments, trailing commas) as text: one member is set or removed and
// every other byte — formatting, comments, key order — stays as it was.

// maxDepth bounds nesting, so that hostile input cannot exhaust the stack.
const maxDepth = 200

// member is one "key": value of an object, as offsets into the text.
type member struct {
	key              string
	keyStart         int // the opening quote
	valStart, valEnd int
}

// object is an object's braces and members.
type object struct {
	open, close int // offsets of { and }
	members     []member
}

func (o *object) find(key string) *member {
	for i := range o.members {
		if o.members[i].key == key {
			return &o.members[i]
		}
	}
	return nil
}

// jsonScanner walks JSONC text.
type jsonScanner struct {
	src []byte
	pos int
}

func (s *jsonScanner) fail(format string, args ...any) error {
	line := 1 + bytes.Count(s.src[:min(s.pos, len(s.src))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// skip passes whitespace and comments.
func (s *jsonScanner) skip() error {
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.pos++
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '/':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '*':
			end := bytes.Index(s.src[s.pos+2:], []byte("*/"))
			if end < 0 {
				return s.fail("a /* comment is not closed")
			}
			s.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// value passes one value, returning where it starts and ends; objects
// and arrays are checked all the way down.
func (s *jsonScanner) value(depth int) (int, int, error) {
	if depth > maxDepth {
		return 0, 0, s.fail("nested more than %d deep", maxDepth)
	}
	if err := s.skip(); err != nil {
		return 0, 0, err
	}
	start := s.pos
	if s.pos >= len(s.src) {
		return 0, 0, s.fail("a value is missing")
	}
	switch c := s.src[s.pos]; c {
	case '{':
		if _, err := s.object(depth); err != nil {
			return 0, 0, err
		}
	case '[':
		if err := s.array(depth); err != nil {
			return 0, 0, err
		}
	case '"':
		if _, err := s.str(); err != nil {
			return 0, 0, err
		}
	default:
		end := s.pos
		for end < len(s.src) && strings.IndexByte("+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", s.src[end]) >= 0 {
			end++
		}
		var v any
		if end == s.pos || json.Unmarshal(s.src[s.pos:end], &v) != nil {
			return 0, 0, s.fail("unexpected %q", string(s.src[s.pos:max(end, s.pos+1)]))
		}
		s.pos = end
	}
	return start, s.pos, nil
}

// str passes a string and returns its value.
func (s *jsonScanner) str() (string, error) {
	start := s.pos
	s.pos++
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '\n':
			return "", s.fail("a string is not closed on its line")
		case '"':
			s.pos++
			var v string
			if err := json.Unmarshal(s.src[start:s.pos], &v); err != nil {
				return "", s.fail("a string is not valid: %v", err)
			}
			return v, nil
		}
		s.pos++
	}
	return "", s.fail("a string is not closed")
}

func (s *jsonScanner) array(depth int) error {
	s.pos++ // [
	for {
		if err := s.skip(); err != nil {
			return err
		}
		if s.pos < len(s.src) && s.src[s.pos] == ']' {
			s.pos++
			return nil
		}
		if _, _, err := s.value(depth + 1); err != nil {
			return err
		}
		if err := s.skip(); err != nil {
			return err
		}
		if s.pos >= len(s.src) {
			return s.fail("an array is not closed")
		}
		switch s.src[s.pos] {
		case ',':
			s.pos++
		case ']':
		default:
			return s.fail("want , or ] in an array, not %q", s.src[s.pos])
		}
	}
}

// object passes an object whose { is at pos and returns its members.
func (s *jsonScanner) object(depth int) (*object, error) {
	o := &object{open: s.pos}
	s.pos++
	for {
		if err := s.skip(); err != nil {
			return nil, err
		}
		if s.pos >= len(s.src) {
			return nil, s.fail("an object is not closed")
		}
		if s.src[s.pos] == '}' {
			o.close = s.pos
			s.pos++
			return o, nil
		}
		if s.src[s.pos] != '"' {
			return nil, s.fail("want a key in quotes, not %q", s.src[s.pos])
		}
		m := member{keyStart: s.pos}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		m.key = key
		if o.find(key) != nil {
			return nil, s.fail("the key %q is there twice", key)
		}
		if err := s.skip(); err != nil {
			return nil, err
		}
		if s.pos >= len(s.src) || s.src[s.pos] != ':' {
			return nil, s.fail("want : after the key %q", key)
		}
		s.pos++
		if m.valStart, m.valEnd, err = s.value(depth + 1); err != nil {
			return nil, err
		}
		o.members = append(o.members, m)
		if err := s.skip(); err != nil {
			return nil, err
		}
		if s.pos < len(s.src) && s.src[s.pos] == ',' {
			s.pos++
		} else if s.pos < len(s.src) && s.src[s.pos] != '}' {
			return nil, s.fail("want , or } after the value of %q", key)
		}
	}
}

// parseObjectAt scans the object whose { is at pos.
func parseObjectAt(src []byte, pos int) (*object, error) {
	s := &jsonScanner{src: src, pos: pos}
	return s.object(0)
}

// parseDocument checks that src is one JSONC object and returns it; nil
// for a file that is empty or only comments.
func parseDocument(src []byte) (*object, error) {
	s := &jsonScanner{src: src}
	if err := s.skip(); err != nil {
		return nil, err
	}
	if s.pos == len(s.src) {
		return nil, nil
	}
	if s.src[s.pos] != '{' {
		return nil, s.fail("the file is not a JSON object")
	}
	o, err := s.object(0)
	if err != nil {
		return nil, err
	}
	if err := s.skip(); err != nil {
		return nil, err
	}
	if s.pos != len(s.src) {
		return nil, s.fail("text after the object")
	}
	return o, nil
}

// lineIndent is the whitespace before pos on its line, if only whitespace
// is there; ok is false if something else precedes pos on its line.
func lineIndent(src []byte, pos int) (indent string, ok bool) {
	start := bytes.LastIndexByte(src[:pos], '\n') + 1
	lead := src[start:pos]
	if len(bytes.TrimLeft(lead, " \t")) != 0 {
		return "", false
	}
	return string(lead), true
}

// indentOf is the indentation of the line that holds pos.
func indentOf(src []byte, pos int) string {
	start := bytes.LastIndexByte(src[:pos], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// unitOf guesses the file's indentation step from its first indented
// member; two spaces if it has none.
func unitOf(src []byte, root *object) string {
	if root != nil {
		for _, m := range root.members {
			if ind, ok := lineIndent(src, m.keyStart); ok && ind != "" {
				return ind
			}
		}
	}
	return "  "
}

// render is v as indented JSON whose lines after the first start with
// prefix.
func render(v any, prefix, unit string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, unit)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// nest wraps v in objects keyed by path, innermost last.
func nest(path []string, v any) any {
	for i := len(path) - 1; i >= 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return v
}

// errNotObject says that a key on the path holds something else.
var errNotObject = errors.New("is not an object")

// setJSON sets the member at path (objects on the way are made) to v.
func setJSON(src []byte, path []string, v any) ([]byte, error) {
	root, err := parseDocument(src)
	if err != nil {
		return nil, err
	}
	unit := unitOf(src, root)
	if root == nil {
		text, err := render(nest(path, v), "", unit)
		if err != nil {
			return nil, err
		}
		return []byte(string(src) + text + "\n"), nil
	}
	obj := root
	for i, key := range path {
		m := obj.find(key)
		if m == nil {
			return insertMember(src, obj, unit, key, nest(path[i+1:], v))
		}
		if i == len(path)-1 {
			text, err := render(v, indentOf(src, m.keyStart), unit)
			if !bytes.Contains(src[m.valStart:m.valEnd], []byte("\n")) {
				// One line before, one line after.
				var compact []byte
				compact, err = json.Marshal(v)
				text = string(compact)
			}
			if err != nil {
				return nil, err
			}
			return splice(src, m.valStart, m.valEnd, text), nil
		}
		if src[m.valStart] != '{' {
			return nil, fmt.Errorf("%q %w", strings.Join(path[:i+1], "."), errNotObject)
		}
		if obj, err = parseObjectAt(src, m.valStart); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// insertMember adds "key": v as obj's last member.
func insertMember(src []byte, obj *object, unit, key string, v any) ([]byte, error) {
	keyText, _ := json.Marshal(key)
	outer := indentOf(src, obj.open)
	inner := outer + unit
	if len(obj.members) > 0 {
		if ind, ok := lineIndent(src, obj.members[0].keyStart); ok {
			inner = ind
		}
	}
	text, err := render(v, inner, unit)
	if err != nil {
		return nil, err
	}
	entry := string(keyText) + ": " + text
	if len(obj.members) == 0 {
		return splice(src, obj.open+1, obj.open+1, "\n"+inner+entry+"\n"+outer), nil
	}
	last := obj.members[len(obj.members)-1]
	tail := src[last.valEnd:obj.close]
	nl := bytes.LastIndexByte(tail, '\n')
	if nl < 0 {
		// An object on one line gets its new member on that line.
		compact, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return splice(src, last.valEnd, last.valEnd, ", "+string(keyText)+": "+string(compact)), nil
	}
	// Before the newline that ends the members, so that a comment on the
	// last member's line stays there. A file that ends its members with a
	// comma gets one after the new member too.
	at := last.valEnd + nl
	if trailingComma(tail) {
		return splice(src, at, at, "\n"+inner+entry+","), nil
	}
	out := splice(src, at, at, "\n"+inner+entry)
	return splice(out, last.valEnd, last.valEnd, ","), nil
}

// trailingComma reports whether the text after a last member, up to the
// closing brace, has a comma outside comments.
func trailingComma(tail []byte) bool {
	s := &jsonScanner{src: tail}
	_ = s.skip()
	return s.pos < len(tail) && tail[s.pos] == ','
}

// removeJSON removes the member at path; found is false if it is not there.
func removeJSON(src []byte, path []string) (out []byte, found bool, err error) {
	root, err := parseDocument(src)
	if err != nil || root == nil {
		return src, false, err
	}
	obj := root
	for i, key := range path {
		m := obj.find(key)
		if m == nil {
			return src, false, nil
		}
		if i < len(path)-1 {
			if src[m.valStart] != '{' {
				return src, false, nil
			}
			if obj, err = parseObjectAt(src, m.valStart); err != nil {
				return nil, false, err
			}
			continue
		}
		return cutMember(src, obj, m), true, nil
	}
	return src, false, nil
}

// cutMember removes m from obj: its line if it has one of its own, with
// the comma after it — or, for the last member, the one before it.
func cutMember(src []byte, obj *object, m *member) []byte {
	start := m.keyStart
	if _, ok := lineIndent(src, m.keyStart); ok {
		if nl := bytes.LastIndexByte(src[:m.keyStart], '\n'); nl > obj.open {
			start = nl
		}
	} else {
		for start > obj.open+1 && (src[start-1] == ' ' || src[start-1] == '\t') {
			start--
		}
	}
	end := m.valEnd
	s := &jsonScanner{src: src, pos: m.valEnd}
	_ = s.skip()
	if s.pos < len(src) && src[s.pos] == ',' {
		// A comma follows: it goes too, and so does the space up to it.
		return splice(src, start, s.pos+1, "")
	}
	idx := 0
	for i := range obj.members {
		if obj.members[i].keyStart == m.keyStart {
			idx = i
		}
	}
	if idx == 0 {
		blank := func(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
		if blank(src[obj.open+1:m.keyStart]) && blank(src[end:obj.close]) {
			return splice(src, obj.open+1, obj.close, "")
		}
		if start == m.keyStart {
			return splice(src, obj.open+1, end, "")
		}
		return splice(src, start, end, "")
	}
	prev := obj.members[idx-1]
	p := &jsonScanner{src: src, pos: prev.valEnd}
	_ = p.skip()
	out := splice(src, start, end, "")
	if p.pos < len(src) && src[p.pos] == ',' && p.pos < start {
		out = splice(out, p.pos, p.pos+1, "")
	}
	return out
}

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// standardJSON is src as plain JSON: comments blanked, trailing commas
// dropped; for decoding what an edit produced.
func standardJSON(src []byte) []byte {
	out := bytes.Clone(src)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			end := len(out)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	// Trailing commas: a comma whose next non-space is } or ].
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}
