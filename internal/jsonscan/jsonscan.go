// Package jsonscan finds the members of a JSON object without decoding
// them: the frame path reads a frame's id, method and name
// and forwards the rest as the bytes it came in. It is a scanner over
// input that is already known to be valid JSON (json.Valid), so it only
// has to tell strings, nesting and separators apart; encoding/json remains
// the judge of validity.
package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// Members calls fn with each member of the JSON object b, in order: its key
// as written between the quotes and its value's raw bytes. b must be valid
// JSON (json.Valid). It returns false, without calling fn further, when b
// is not an object, when a key holds an escape or is not UTF-8 (the caller
// would have to decode it to compare it), or when fn returns false.
func Members(b []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		start := skipSpace(b, i+1)
		end = valueEnd(b, start)
		if end <= start || !fn(key, b[start:end]) {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(b, i+1)
		default:
			return false
		}
	}
	return false
}

// String returns the contents of a JSON string value without its quotes,
// when it holds no escapes; ok is false otherwise (decode it instead).
func String(value []byte) (s []byte, ok bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' {
		return nil, false
	}
	s = value[1 : len(value)-1]
	return s, bytes.IndexByte(s, '\\') < 0
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that starts at b[i],
// or -1 if it does not end.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// valueEnd returns the index just past the value that starts at b[i], or
// -1 if it does not end.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = stringEnd(b, i) - 1; i < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}
