package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// MissingVarError reports a placeholder whose variable is not set. Plexus
// never connects with a placeholder left empty (R-CFG-3).
type MissingVarError struct {
	Name string
}

func (e *MissingVarError) Error() string {
	return fmt.Sprintf("environment variable %q is not set", e.Name)
}

// Expand replaces $VAR and ${VAR} in s by lookup's values; $$ is a literal $.
// Any other $ is an error rather than a literal, so that a typo such as
// "${TOKEN" cannot reach a server as text. Values are inserted as they are:
// a value containing $ is not expanded again.
//
// Errors name the variable or the position, never the surrounding text,
// which may be a URL with secrets in its query.
func Expand(s string, lookup func(name string) (string, bool)) (string, error) {
	var b strings.Builder
	err := scan(s, func(lit string) { b.WriteString(lit) }, func(name string) error {
		v, ok := lookup(name)
		if !ok {
			return &MissingVarError{Name: name}
		}
		b.WriteString(v)
		return nil
	})
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// Placeholders lists the variables s refers to, in order of first use and
// without repeats. Scanning stops at a malformed placeholder; Validate
// reports those.
func Placeholders(s string) []string {
	var names []string
	seen := make(map[string]bool)
	_ = scan(s, func(string) {}, func(name string) error {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return nil
	})
	return names
}

// checkPlaceholders reports the first malformed placeholder in s.
func checkPlaceholders(s string) error {
	return scan(s, func(string) {}, func(string) error { return nil })
}

// scan splits s into literal text and placeholder names, stopping at the
// first error, from ref or from the syntax.
func scan(s string, lit func(string), ref func(name string) error) error {
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			lit(s[i:])
			return nil
		}
		at := i + j
		lit(s[i:at])
		rest := s[at+1:]
		switch {
		case rest == "":
			return placeholderError(s, at, "a '$' ends the text")
		case rest[0] == '$':
			lit("$")
			i = at + 2
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return placeholderError(s, at, "'${' is not closed by '}'")
			}
			name := rest[1:end]
			if !ValidVarName(name) {
				return placeholderError(s, at, "'${...}' does not hold a variable name")
			}
			if err := ref(name); err != nil {
				return err
			}
			i = at + 1 + end + 1
		case isVarStart(rest[0]):
			n := 1
			for n < len(rest) && isVarChar(rest[n]) {
				n++
			}
			if err := ref(rest[:n]); err != nil {
				return err
			}
			i = at + 1 + n
		default:
			return placeholderError(s, at, "a '$' is not followed by a variable name")
		}
	}
}

// placeholderError locates the problem by position only: the text around it
// may be a secret.
func placeholderError(s string, at int, msg string) error {
	return fmt.Errorf("malformed placeholder at character %d: %s (write $VAR or ${VAR}, and $$ for a literal $)",
		utf8.RuneCountInString(s[:at])+1, msg)
}

// VarNames lists every environment variable s refers to, sorted and without
// repeats: env and header references, placeholders in the URL and header
// text, bearerTokenEnvVar and the OAuth client secret. The daemon resolves
// exactly these, and reports all the missing ones at once.
func (s Server) VarNames() []string {
	set := make(map[string]bool)
	add := func(names ...string) {
		for _, n := range names {
			if n != "" {
				set[n] = true
			}
		}
	}
	for _, r := range s.Env {
		add(r.Env)
	}
	add(Placeholders(s.URL)...)
	for _, v := range s.Headers {
		add(v.Env)
		add(Placeholders(v.Text)...)
	}
	add(s.BearerTokenEnvVar)
	if o := s.OAuth; o != nil {
		for _, r := range []*Ref{o.ClientSecret, o.PrivateKey, o.IDPClientSecret} {
			if r != nil {
				add(r.Env)
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// ValidVarName reports whether s is a portable environment variable name.
func ValidVarName(s string) bool {
	if s == "" || !isVarStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isVarChar(s[i]) {
			return false
		}
	}
	return true
}

func isVarStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

func isVarChar(c byte) bool { return isVarStart(c) || '0' <= c && c <= '9' }
