package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Plexus changes a server's definition only where it must (a tool's name
// in an aggregating profile, text that had to be cleaned or bounded), and
// only there: these helpers replace one member's value and leave every
// other byte of the definition as the server wrote it.

// span is where one member's value lies in an object.
type span struct{ start, end int }

// memberSpan finds the value of member key in the JSON object obj. Of
// members written twice, the last counts, as encoding/json reads it.
func memberSpan(obj []byte, key string) (span, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return span{}, false, errors.New("not a JSON object")
	}
	var found span
	ok := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return span{}, false, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return span{}, false, err
		}
		if k == key {
			end := int(dec.InputOffset())
			found, ok = span{end - len(v), end}, true
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return span{}, false, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return span{}, false, errors.New("trailing data after the JSON object")
	}
	return found, ok, nil
}

// Member returns the value of member key of the JSON object obj as it is
// written there (a slice of obj); false if obj has no such member or is
// not an object.
func Member(obj json.RawMessage, key string) (json.RawMessage, bool) {
	s, ok, err := memberSpan(obj, key)
	if err != nil || !ok {
		return nil, false
	}
	return obj[s.start:s.end:s.end], true
}

// WithMember returns a copy of the JSON object obj whose member key has
// value (valid JSON), added first if obj has none; every other byte is as
// in obj. obj itself is never changed.
func WithMember(obj json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	s, ok, err := memberSpan(obj, key)
	if err != nil {
		return nil, err
	}
	if ok {
		out := make([]byte, 0, len(obj)-(s.end-s.start)+len(value))
		out = append(out, obj[:s.start]...)
		out = append(out, value...)
		return append(out, obj[s.end:]...), nil
	}
	k, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	open := bytes.IndexByte(obj, '{') + 1
	rest := obj[open:]
	out := make([]byte, 0, len(obj)+len(k)+len(value)+2)
	out = append(out, obj[:open]...)
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, value...)
	if len(bytes.TrimSpace(rest)) > 1 { // more than the closing brace
		out = append(out, ',')
	}
	return append(out, rest...), nil
}

// WithName returns the definition raw (a tool's or a prompt's) under
// another name, every other byte as the server wrote it; raw itself if
// the name is already name.
func WithName(raw json.RawMessage, name string) (json.RawMessage, error) {
	v, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	if cur, ok := Member(raw, "name"); ok && bytes.Equal(cur, v) {
		return raw, nil
	}
	out, err := WithMember(raw, "name", v)
	if err != nil {
		return nil, fmt.Errorf("renaming a definition: %w", err)
	}
	return out, nil
}

// withString sets member key of obj to the JSON string s.
func withString(obj json.RawMessage, key, s string) (json.RawMessage, error) {
	v, err := marshalCompact(s)
	if err != nil {
		return nil, err
	}
	return WithMember(obj, key, v)
}
