package cmdline

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrEmpty is returned for a line with no words.
var ErrEmpty = errors.New("empty command line: want a command and its arguments")

// SyntaxError is a line Split refuses, located by character position.
type SyntaxError struct {
	Pos int // of the offending character, counted from 1
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s (at character %d)", e.Msg, e.Pos)
}

// Split splits line into words the way a POSIX shell would, without running
// one:
//
//   - spaces, tabs and line breaks separate words;
//   - single quotes keep everything literally;
//   - double quotes keep everything but \" \\ \$ \` (and backslash-newline,
//     which disappears); before any other character a backslash stays;
//   - outside quotes a backslash escapes the next character, and
//     backslash-newline continues the line;
//   - quoted and unquoted parts next to each other make one word, and ""
//     is an empty word.
//
// Unquoted | & ; < > ( ) `, $( anywhere but in single quotes, and # at the
// start of a word are errors: a shell would act on them, and Plexus does not
// run one.
func Split(line string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		open  bool // a word has started, even if it is still empty ("")
	)
	fail := func(i int, format string, args ...any) error {
		return &SyntaxError{Pos: utf8.RuneCountInString(line[:i]) + 1, Msg: fmt.Sprintf(format, args...)}
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case isSpace(c):
			if open {
				words = append(words, word.String())
				word.Reset()
				open = false
			}
			i++
		case c == '\\':
			if n := continuation(line[i+1:]); n > 0 {
				i += 1 + n // joins lines, not words
				continue
			}
			if i+1 == len(line) {
				return nil, fail(i, "trailing backslash: nothing follows it to escape")
			}
			word.WriteByte(line[i+1])
			open = true
			i += 2
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fail(i, "unterminated single quote")
			}
			word.WriteString(line[i+1 : i+1+end])
			open = true
			i += end + 2
		case c == '"':
			n, err := doubleQuoted(line, i, &word, fail)
			if err != nil {
				return nil, err
			}
			open = true
			i += n
		case c == '$' && strings.HasPrefix(line[i+1:], "("):
			return nil, fail(i, "command substitution $(...) does not work: Plexus runs the command directly, without a shell; quote it ('$(') if it is meant literally")
		case strings.IndexByte("|&;<>()`", c) >= 0:
			return nil, fail(i, "unquoted %q does not work: Plexus runs the command directly, without a shell, so shell operators have no effect; quote it ('%c') if it is meant literally", string(c), c)
		case c == '#' && !open:
			return nil, fail(i, "a word starting with # would be a comment in a shell; quote it ('#') if it is meant literally")
		default:
			word.WriteByte(c)
			open = true
			i++
		}
	}
	if open {
		words = append(words, word.String())
	}
	if len(words) == 0 {
		return nil, ErrEmpty
	}
	return words, nil
}

// doubleQuoted appends the text of the double-quoted string at line[start]
// to word and returns how many bytes it spans, quotes included.
func doubleQuoted(line string, start int, word *strings.Builder, fail func(int, string, ...any) error) (int, error) {
	for i := start + 1; i < len(line); {
		switch c := line[i]; c {
		case '"':
			return i + 1 - start, nil
		case '\\':
			if n := continuation(line[i+1:]); n > 0 {
				i += 1 + n
				continue
			}
			if i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
				word.WriteByte(line[i+1])
				i += 2
				continue
			}
			word.WriteByte(c) // sh keeps a backslash that escapes nothing
			i++
		case '$', '`':
			if c == '`' || strings.HasPrefix(line[i+1:], "(") {
				// A shell substitutes commands inside double quotes too.
				return 0, fail(i, "command substitution does not work: Plexus runs the command directly, without a shell; use single quotes if it is meant literally")
			}
			word.WriteByte(c)
			i++
		default:
			word.WriteByte(c)
			i++
		}
	}
	return 0, fail(start, "unterminated double quote")
}

// continuation returns the length of the line break at the start of s, which
// a preceding backslash turns into a line continuation; 0 if there is none.
// A CRLF counts, for lines pasted from Windows.
func continuation(s string) int {
	switch {
	case strings.HasPrefix(s, "\n"):
		return 1
	case strings.HasPrefix(s, "\r\n"):
		return 2
	}
	return 0
}

// isSpace is a shell's blank plus line breaks; a CR counts so that a line
// pasted from Windows does not end its last word with one.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Join renders argv as a line that Split turns back into argv. Words that
// need it are single-quoted, the one quoting in which nothing is special.
func Join(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quote(a)
	}
	return strings.Join(parts, " ")
}

func quote(s string) string {
	if s != "" && strings.Trim(s, safeChars) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// safeChars never mean anything to a shell, in any position.
const safeChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"
