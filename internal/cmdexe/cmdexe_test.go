package cmdexe

import (
	"errors"
	"strings"
	"testing"
)

const comspec = `C:\Windows\System32\cmd.exe`

func TestCommandLine(t *testing.T) {
	prefix := comspec + ` /e:ON /v:OFF /d /c ""C:\Program Files\nodejs\npx.cmd"`
	for _, tc := range []struct {
		name string
		args []string
		want string // after prefix, before the closing quote
	}{
		{"no arguments", nil, ``},
		{"plain words stay bare", []string{"-y", "@scope/server@1.2.3"}, ` -y @scope/server@1.2.3`},
		{"empty argument is kept", []string{""}, ` ""`},
		{"space", []string{"my dir"}, ` "my dir"`},
		{"ampersand cannot start a command", []string{"a&calc.exe"}, ` "a&calc.exe"`},
		{"pipe and redirections stay literal", []string{"a|b", "<in", ">out"}, ` "a|b" "<in" ">out"`},
		{"caret", []string{"x^y"}, ` "x^y"`},
		{"percent cannot expand a variable", []string{"%PATH%"}, ` "%%cd:~,%PATH%%cd:~,%"`},
		{"bang stays literal", []string{"hi!"}, ` "hi!"`},
		{"quote is doubled", []string{`say "hi"`}, ` "say ""hi"""`},
		{"quote alone", []string{`"`}, ` """"`},
		{"quote breaking out then ampersand", []string{`" & calc & "`}, ` """ & calc & """`},
		{"backslashes before a quote are doubled", []string{`a\"b`}, ` "a\\""b"`},
		{"trailing backslashes of a quoted argument are doubled", []string{`C:\my dir\`}, ` "C:\my dir\\"`},
		{"backslashes in a bare argument stay", []string{`C:\dir\`}, ` C:\dir\`},
		{"non-ASCII stays bare", []string{"café"}, ` café`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CommandLine(comspec, `C:\Program Files\nodejs\npx.cmd`, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if want := prefix + tc.want + `"`; got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestCommandLineRefusesLineBreaks(t *testing.T) {
	for _, a := range []string{"a\nb", "a\rb", "a\x00b"} {
		_, err := CommandLine(comspec, `C:\x\npx.cmd`, []string{"ok", a})
		if !errors.Is(err, ErrLineBreak) || !strings.Contains(err.Error(), "argument 2 for npx.cmd") {
			t.Errorf("%q: err = %v, want the line-break error naming argument 2", a, err)
		}
	}
}

func TestCommandLineRefusesBadScriptNames(t *testing.T) {
	for _, s := range []string{`C:\x\a".cmd`, `C:\x\`, "C:\\x\\a\n.cmd"} {
		if _, err := CommandLine(comspec, s, nil); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestCommandLineQuotesACmdExeWithASpace(t *testing.T) {
	got, err := CommandLine(`C:\Win Dows\System32\cmd.exe`, `C:\x\a.bat`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"C:\Win Dows\System32\cmd.exe" /e:ON /v:OFF /d /c ""C:\x\a.bat""`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestIsBatch(t *testing.T) {
	for path, want := range map[string]bool{
		`C:\x\npx.cmd`: true, `C:\x\NPX.CMD`: true, `C:\x\run.bat`: true,
		`C:\x\node.exe`: false, `C:\x\cmd`: false, `/usr/bin/npx`: false,
	} {
		if got := IsBatch(path); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", path, got, want)
		}
	}
}

// FuzzCommandLine checks, for any argument, that cmd.exe's own quote
// toggling can never reach an unquoted & | < > ^ outside the script's
// arguments, and that no bare % survives.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{"", "a b", `" & calc & "`, `\"`, "%PATH%", `a\\`, "^&|<>!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		line, err := CommandLine(comspec, `C:\x\npx.cmd`, []string{a})
		if err != nil {
			if !strings.ContainsAny(a, "\r\n\x00") {
				t.Fatalf("%q refused: %v", a, err)
			}
			return
		}
		body := strings.TrimPrefix(line, comspec+` /e:ON /v:OFF /d /c "`)
		body = strings.TrimSuffix(body, `"`)
		inQuotes := false
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '"' {
				inQuotes = !inQuotes
				continue
			}
			if !inQuotes && strings.IndexByte("&|<>^", c) >= 0 {
				t.Fatalf("%q: unquoted %q at %d in %s", a, c, i, line)
			}
		}
		if inQuotes {
			t.Fatalf("%q: quotes unbalanced in %s", a, line)
		}
		if strings.Contains(strings.ReplaceAll(body, `%%cd:~,%`, ""), "%") {
			t.Fatalf("%q: a bare %% in %s", a, line)
		}
	})
}
