package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What the user who approves a call is shown of its arguments: enough to
// judge it (which file, which repository), never a secret, never long.

// secretKey matches argument names that hold secrets.
var secretKey = regexp.MustCompile(`(?i)(token|key|secret|passw|pwd|auth|credential|private|cookie|session|signature)`)

// secretShape matches values that look like credentials whatever their
// name: bearer values and well-known token prefixes.
var secretShape = regexp.MustCompile(`(?i)\b(bearer|basic)[ \t]+[A-Za-z0-9._~+/=-]{8,}|\b(ghp_|gho_|github_pat_|glpat-|xox[abpr]-|sk-|sk_live_|ntn_|secret_)[A-Za-z0-9_\-]{8,}|eyJ[A-Za-z0-9_-]{10,}\.`)

// Redacted stands for a value not shown.
const Redacted = "[redacted]"

// maxValue bounds one string value in a summary, in characters.
const maxValue = 80

// Summary is a one-line account of a call's arguments, at most max bytes:
// each top-level member as key=value in key order, long strings cut,
// objects and arrays by their size, and the values under names that hold
// secrets, or shaped like tokens, as Redacted.
func Summary(args json.RawMessage, max int) string {
	return cut(summary(args, max), max)
}

func summary(args json.RawMessage, max int) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" || string(args) == "{}" {
		return "no arguments"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return "arguments that are not a JSON object"
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cut(k, 40))
		b.WriteByte('=')
		b.WriteString(value(k, m[k]))
		if b.Len() > max {
			break
		}
	}
	return b.String()
}

// value is one argument's value as Summary shows it.
func value(key string, raw json.RawMessage) string {
	if secretKey.MatchString(key) {
		return Redacted
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "?"
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "?"
		}
		if secretShape.MatchString(s) {
			return Redacted
		}
		return strconv.Quote(cut(s, maxValue))
	case '{':
		var o map[string]json.RawMessage
		_ = json.Unmarshal(raw, &o)
		return fmt.Sprintf("{%d keys}", len(o))
	case '[':
		var a []json.RawMessage
		_ = json.Unmarshal(raw, &a)
		return fmt.Sprintf("[%d items]", len(a))
	}
	return cut(string(raw), 40) // a number, true, false, null
}

// cut shortens s to at most n bytes, on a character boundary, marking a
// cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)] + "…"
}
