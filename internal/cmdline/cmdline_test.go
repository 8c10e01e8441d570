package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`,
			[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/my docs"}},
		{"  a \t b\n c  ", []string{"a", "b", "c"}},
		{"a\r\n", []string{"a"}},
		{`'a b' 'it''s'`, []string{"a b", "its"}},
		{`'$(x) | ; \ "'`, []string{`$(x) | ; \ "`}},
		{`'multi` + "\n" + `line'`, []string{"multi\nline"}},
		{`a"b c"d`, []string{"ab cd"}},
		{`a'b c'd "e"'f'`, []string{"ab cd", "ef"}},
		{`"" x ''`, []string{"", "x", ""}},
		{`""`, []string{""}},
		{`"a\"b\\c\$d\` + "`" + `e"`, []string{"a\"b\\c$d`e"}},
		{`"a\nb\x"`, []string{`a\nb\x`}},
		{`"$HOME and ${X}"`, []string{"$HOME and ${X}"}},
		{`$HOME`, []string{"$HOME"}},
		{`a\ b \"c\' \\ \|`, []string{"a b", `"c'`, `\`, "|"}},
		{"a \\\n  b", []string{"a", "b"}},
		{"a\\\nb", []string{"ab"}},
		{"a\\\r\nb", []string{"ab"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`a#b "#c" '#d' \#e`, []string{"a#b", "#c", "#d", "#e"}},
		{`--url=https://x.example/mcp?a=1 ~/bin`, []string{"--url=https://x.example/mcp?a=1", "~/bin"}},
		{`'|' "&" \; "<>" '()' "\` + "`" + `"`, []string{"|", "&", ";", "<>", "()", "`"}},
		{`"$" "a$" $`, []string{"$", "a$", "$"}},
		{"ünï \"cödé\"", []string{"ünï", "cödé"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		line string
		want string // in the message
	}{
		{"", "empty command line"},
		{" \t\n ", "empty command line"},
		{"\\\n", "empty command line"},
		{`a 'b`, "unterminated single quote (at character 3)"},
		{`a "b`, "unterminated double quote (at character 3)"},
		{`a "b\"`, "unterminated double quote"},
		{`a \`, "trailing backslash"},
		{`a | b`, `unquoted "|" does not work: Plexus runs the command directly, without a shell`},
		{`a && b`, `unquoted "&"`},
		{`a; b`, `unquoted ";"`},
		{`a < f`, `unquoted "<"`},
		{`a >f`, `unquoted ">"`},
		{`a 2>&1`, `unquoted ">"`},
		{`(a)`, `unquoted "("`},
		{`a)`, `unquoted ")"`},
		{"a `b`", "unquoted \"`\""},
		{`a $(b)`, "command substitution $(...) does not work"},
		{`a"$(b)"`, "command substitution does not work"},
		{"\"`b`\"", "command substitution does not work"},
		{`a #comment`, "would be a comment"},
		{`# x`, "would be a comment"},
		{`ü |`, "(at character 3)"},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Split(%q) = %q, %v; want error containing %q", tt.line, got, err, tt.want)
		}
	}
	if _, err := Split(""); !errors.Is(err, ErrEmpty) {
		t.Errorf("Split(\"\") = %v, want ErrEmpty", err)
	}
	var se *SyntaxError
	if _, err := Split(`x |`); !errors.As(err, &se) || se.Pos != 3 {
		t.Errorf("Split(`x |`) = %v, want *SyntaxError at 3", err)
	}
	// Every operator message says what to do about it.
	for _, op := range []string{"|", "&", ";", "<", ">", "(", ")", "`"} {
		if _, err := Split("a " + op); err == nil || !strings.Contains(err.Error(), "quote it") {
			t.Errorf("Split(%q) = %v, want advice to quote", "a "+op, err)
		}
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@scope/pkg", "/srv/my docs"}, `npx -y @scope/pkg '/srv/my docs'`},
		{[]string{""}, `''`},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{"a=b,c:d%e+f"}, `a=b,c:d%e+f`},
		{[]string{"#x", "~", "$(x)", "a\nb"}, "'#x' '~' '$(x)' 'a\nb'"},
	}
	for _, tt := range tests {
		if got := Join(tt.argv); got != tt.want {
			t.Errorf("Join(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

func TestJoinRoundTrip(t *testing.T) {
	for _, argv := range [][]string{
		{"a"},
		{"", ""},
		{`\`, `"`, `'`, "'\"'", "\\\n", "\r", "\t", " "},
		{"|", "&&", ";", "<", ">", "(", ")", "`x`", "$(x)", "${X}", "$X", "#", "a#", "~", "*", "?", "[a]", "{a,b}", "!"},
		{"\x00", "\xff\xfe", "ü", "日本"},
	} {
		got, err := Split(Join(argv))
		if err != nil || !slices.Equal(got, argv) {
			t.Errorf("Split(Join(%q)) = %q, %v", argv, got, err)
		}
	}
}

// FuzzSplit checks that Split never panics, and that Join is its inverse:
// for any argv Split returns and for any argv at all.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		`npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`,
		`a"b c"d`, `"" ''`, `'it'\''s'`, `"a\"b\\c\$d"`, "a \\\n b", `a\`, `"x`, `'x`,
		"a | b", "a $(b)", "\"`b`\"", "# c", `\#`, "\r\n", "a\x00b", "\xff", "ü \"ö\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if argv, err := Split(line); err == nil {
			if len(argv) == 0 {
				t.Fatalf("Split(%q) returned no words and no error", line)
			}
			back, err := Split(Join(argv))
			if err != nil || !slices.Equal(back, argv) {
				t.Fatalf("Split(%q) = %q; Split(Join(...)) = %q, %v", line, argv, back, err)
			}
		}
		// The input read as an argv of NUL-separated words.
		argv := strings.Split(line, "\x00")
		back, err := Split(Join(argv))
		if err != nil || !slices.Equal(back, argv) {
			t.Fatalf("Split(Join(%q)) = %q, %v", argv, back, err)
		}
	})
}
