package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// printJSON writes v as indented JSON, the stable --json form. HTML escaping
// is off because the output is read by people and jq, not embedded in pages.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printRawJSON indents JSON that came from the daemon without decoding it,
// so that nothing (number precision, key order, unknown fields) is lost.
func printRawJSON(w io.Writer, raw json.RawMessage) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("the daemon sent invalid JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// defaultWidth is the line width of tables when stdout is not a terminal: a
// fixed number keeps piped output the same on every machine.
const defaultWidth = 120

// outputWidth is the width the last column of a table is trimmed to fit.
func (a *app) outputWidth() int {
	if f, ok := a.env.Stdout.(*os.File); ok {
		if w := terminalWidth(f); w > 0 {
			return w
		}
	}
	return defaultWidth
}

// table renders rows under a header in aligned columns. The last column is
// trimmed so that lines fit width: descriptions and errors are long, and a
// wrapped table cannot be read.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = oneLine(c)
	}
	t.rows = append(t.rows, cells)
}

func (t *table) write(w io.Writer, width int) error {
	n := len(t.header)
	widths := make([]int, n)
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, c := range row[:n-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	fixed := 0
	for _, wd := range widths[:n-1] {
		fixed += wd + 2
	}
	// Keep at least a readable stub of the last column even when the other
	// columns are wider than the terminal.
	last := max(width-fixed, 20)
	var b strings.Builder
	for _, row := range append([][]string{t.header}, t.rows...) {
		var line strings.Builder
		for i, c := range row[:n-1] {
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		line.WriteString(truncate(row[n-1], last))
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps the first non-blank line of s, cleaned for a table cell.
func oneLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(sanitize(line)); line != "" {
			return line
		}
	}
	return ""
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// sanitize removes control characters other than newline and tab. Names,
// descriptions, errors and results come from remote servers (R-CAT-4): an
// escape sequence in them must not reach the terminal, where it could
// rewrite the screen or hide text.
func sanitize(s string) string {
	if !strings.ContainsFunc(s, isUnsafe) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isUnsafe(r) {
			return -1
		}
		return r
	}, s)
}

func isUnsafe(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	// Bidi overrides and zero-width characters hide or reorder text as
	// well as escapes do (R-CAT-7).
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff' || r == utf8.RuneError
}

// stateWord is the state column: the daemon's word, never blank.
func stateWord(s apitype.ServerStatus) string {
	if s.State == "" {
		if !s.Enabled {
			return apitype.StateDisabled
		}
		return "unknown"
	}
	return s.State
}

// summary describes a server after a write, e.g. "ready, 4 tools".
func summary(s *apitype.ServerStatus) string {
	if s == nil {
		return "saved"
	}
	switch st := stateWord(*s); st {
	case apitype.StateReady:
		return fmt.Sprintf("%s, %s", st, plural(s.Tools, "tool"))
	case apitype.StateFailed, apitype.StateBackoff:
		if e := oneLine(s.LastError); e != "" {
			return st + ": " + e
		}
		return st
	default:
		return st
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// serverTable renders the NAME STATE TYPE TOOLS ERROR table of ls and status.
func serverTable(servers []apitype.ServerStatus) *table {
	t := &table{header: []string{"NAME", "STATE", "TYPE", "TOOLS", "ERROR"}}
	for _, s := range servers {
		t.add(s.Name, stateWord(s), s.Type, fmt.Sprint(s.Tools), s.LastError)
	}
	return t
}

// warnAll prints the daemon's warnings about a result to stderr.
func (a *app) warnAll(warnings []string) {
	for _, w := range warnings {
		a.warnf("%s", sanitize(w))
	}
}
