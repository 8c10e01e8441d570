// Package cmdexe runs Windows batch files (.cmd, .bat — npx.cmd, pnpm.cmd)
// without a shell injection: CreateProcess hands a batch file to cmd.exe,
// which parses the command line with its own rules (& | < > ^ % split or
// expand it), not the rules Go's argument quoting is written for. The
// command line is built here instead, quoted the way Rust's standard
// library does since CVE-2024-24576: every argument is quoted when it holds
// anything cmd.exe treats specially, a quote is doubled, % cannot expand,
// and line breaks, which end a cmd.exe command, are refused.
//
// CommandLine is pure and tested on every system; Prepare (Windows only)
// applies it to an exec.Cmd.
package cmdexe

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// IsBatch reports whether path names a batch file, which only cmd.exe runs.
func IsBatch(path string) bool {
	switch strings.ToLower(filepath.Ext(baseName(path))) {
	case ".cmd", ".bat":
		return true
	}
	return false
}

// special are the characters that make an argument need quotes for cmd.exe
// (as in Rust's std: space and tab separate; the rest are cmd.exe syntax).
const special = "\t &()[]{}^=;!'+,`~%|<>\""

// CommandLine is the whole command line that has cmd.exe (at comspec) run
// the batch file script with args, each reaching the script as one %N
// argument whatever it holds. /d skips AutoRun commands, /e:ON is needed for
// the % guard, /v:OFF keeps ! literal, and /c's outer quotes are stripped
// by cmd.exe itself.
func CommandLine(comspec, script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"\r\n\x00") || strings.HasSuffix(script, `\`) {
		return "", fmt.Errorf("batch file name %q: Windows file names may not hold a quote or a line break, nor end with a backslash", script)
	}
	var b strings.Builder
	b.WriteString(quoteProgram(comspec))
	b.WriteString(` /e:ON /v:OFF /d /c ""`)
	b.WriteString(script)
	b.WriteString(`"`)
	for i, a := range args {
		if strings.ContainsAny(a, "\r\n\x00") {
			return "", fmt.Errorf("argument %d for %s: %w", i+1, baseName(script), ErrLineBreak)
		}
		b.WriteByte(' ')
		writeArg(&b, a)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// ErrLineBreak is why an argument with a line break cannot reach a batch
// file: cmd.exe would end the command there and run the rest as another.
var ErrLineBreak = errors.New("holds a line break, which cmd.exe cannot pass to a batch file")

func writeArg(b *strings.Builder, a string) {
	quote := a == "" || strings.ContainsAny(a, special)
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, c := range a {
		switch c {
		case '\\':
			backslashes++
			b.WriteRune(c)
			continue
		case '"':
			// The script's own argument parsing reads \" as a quote, so the
			// backslashes before one are doubled; the quote itself is
			// doubled, which keeps cmd.exe's quote count even.
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteString(`""`)
		case '%':
			// %%cd:~,% reads as a lone %: cmd.exe expands "%cd:~,%" to
			// nothing, so no %NAME% in an argument can expand.
			b.WriteString(`%%cd:~,%`)
		default:
			b.WriteRune(c)
		}
		backslashes = 0
	}
	if quote {
		// Backslashes before the closing quote would escape it.
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
}

// quoteProgram quotes the path of cmd.exe if it holds a space.
func quoteProgram(p string) string {
	if strings.ContainsAny(p, " \t") {
		return `"` + p + `"`
	}
	return p
}

// baseName is the last element of a Windows or slash path, on any system.
func baseName(p string) string {
	return p[strings.LastIndexAny(p, `\/`)+1:]
}
