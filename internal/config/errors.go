package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is one thing wrong with a configuration, at a key path such as
// "mcp.servers.docs.url". Path is empty for problems with the whole document
// (malformed JSON).
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Error lists every problem found in a configuration, so that a user fixes
// them in one go instead of one per attempt (STYLE rule 7).
type Error struct {
	Problems []Problem
}

// Error lists the problems one per line, sorted by path.
func (e *Error) Error() string {
	ps := slices.Clone(e.Problems)
	sortProblems(ps)
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
}

// problems collects Problems while decoding and validating.
type problems struct {
	list []Problem
}

func (ps *problems) add(path, msg string) {
	ps.list = append(ps.list, Problem{Path: path, Message: msg})
}

// err returns nil or an *Error with the problems sorted and without repeats
// (decoding and validation may both notice the same thing).
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	sortProblems(list)
	return &Error{Problems: slices.Compact(list)}
}

// KeyPath appends key to a key path. Keys that are not plain words (server
// names are, mistakes may not be) are quoted so that the path stays readable
// and unambiguous: mcp.servers["my server"].
func KeyPath(parent, key string) string {
	if !plainKey(key) {
		return parent + "[" + strconv.Quote(shorten(key)) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// IndexPath appends an array index to a key path: args[2].
func IndexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range []byte(key) {
		if !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// shorten keeps messages bounded when a key or literal is huge.
func shorten(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
