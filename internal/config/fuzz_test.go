package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that a failure is an *Error
// with problems, and that whatever it accepts survives Encode unchanged.
func FuzzDecode(f *testing.F) {
	full, err := Encode(fullFile())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"", "{}", "[]", "null", "{", `{"a" 1}`, `{} x`, "\uFEFF{}", specExample, string(full),
		`{"mcp": {"retryMs": 1.5, "servers": {"x": {"type": "stdio", "colour": 1}}}}`,
		`{"mcp": {}, "mcp": {}}`,
		`{"revision": -1, "mcp": {"servers": {"x": {"type": "http", "url": "https://u:p@h/#f"}}}}`,
		server(`{"type": "http", "url": "https://${HOST}/?k=$K", "headers": {"A": "Bearer $T", "B": {"env": "E"}}}`),
		server(`{"type": "stdio", "command": "c", "args": [], "env": {}, "enabled": false, "maxRestartAttempts": 0}`),
		`{"mcp": {"face": {}, "profiles": {"p": {"servers": ["x"], "naming": "bare"}}}}`,
		`{"mcp": {"retryMs": 99999999999999999999999}}`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
		"{\"mcp\": {\"servers\": {\"x\": {\"type\": \"stdio\", \"command\": \"\xff\"}}}}",
		server(`{"type": "stdio", "command": "c", "sandbox": {"filesystem": {"read": ["/a", "~/b"], "write": []}, "network": ["h:1", "[::1]:2"]}}`),
		server(`{"type": "stdio", "command": "c", "sandbox": {"network": "none"}}`),
		`{"mcp": {"policy": {"rules": [{"tool": "[", "action": "nope"}, 3], "limits": [{"calls": -1, "windowMs": "x"}]}}}`,
		server(`{"type": "stdio", "command": "c", "sandbox": {"network": 3, "filesystem": {"read": ["rel", "/a/../b"]}}}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		f1, err := Decode(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) == 0 || f1 != nil {
				t.Fatalf("Decode(%q) = %v, %#v; want nil and an *Error with problems", data, f1, err)
			}
			return
		}
		b, err := Encode(f1)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)) = %v", data, err)
		}
		f2, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) = %v\n%s", data, err, b)
		}
		if !reflect.DeepEqual(f1, f2) {
			t.Fatalf("round trip of %q changed it:\n%+v\n%+v", data, f1, f2)
		}
		if c := f1.Clone(); !reflect.DeepEqual(c, f1) {
			t.Fatalf("Clone of Decode(%q) differs", data)
		}
	})
}

// FuzzExpand checks Expand and Placeholders against each other and against
// the escaping rule, and that values are never expanded again.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "plain", "$A", "${A}", "$$", "$$$A", "$", "${", "${}", "${1}", "$1", "a${B_2}c$D-e",
		"https://${HOST}/?k=$KEY#x", "ü$Ä", "${A}${A}$A",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Every $ doubled is the literal text, whatever the variables.
		if got, err := Expand(strings.ReplaceAll(s, "$", "$$"), nil); err != nil || got != s {
			t.Fatalf("Expand(escaped %q) = %q, %v", s, got, err)
		}

		var looked []string
		out, err := Expand(s, func(name string) (string, bool) {
			looked = append(looked, name)
			return "$" + name + "${", true // would break if expanded again
		})
		names := Placeholders(s)
		for _, n := range looked {
			if !ValidVarName(n) || !slices.Contains(names, n) {
				t.Fatalf("Expand(%q) looked up %q, not in Placeholders %q", s, n, names)
			}
		}
		if err != nil {
			if checkPlaceholders(s) == nil {
				t.Fatalf("Expand(%q) = %v, but the syntax is fine", s, err)
			}
			return
		}
		if !slices.Equal(dedup(looked), names) {
			t.Fatalf("Expand(%q) looked up %q, Placeholders = %q", s, looked, names)
		}
		if strings.Count(out, "${") < len(looked) {
			t.Fatalf("Expand(%q) = %q: a value was expanded again", s, out)
		}

		// A missing variable is reported by name: the first one used.
		if len(names) > 0 {
			_, err := Expand(s, func(string) (string, bool) { return "", false })
			var missing *MissingVarError
			if !errors.As(err, &missing) || missing.Name != names[0] {
				t.Fatalf("Expand(%q) with no variables = %v, want missing %q", s, err, names[0])
			}
		}
	})
}

func dedup(names []string) []string {
	var out []string
	seen := make(map[string]bool)
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
