package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/statewords"
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

// stateWord is a server's state in the words every front end uses
// (statewords), never blank.
func stateWord(s apitype.ServerStatus) string { return statewords.Of(s) }

// summary describes a server after a write, e.g. "ready, 4 tools".
func summary(s *apitype.ServerStatus) string {
	if s == nil {
		return "saved"
	}
	if s.NeedsApproval {
		return statewords.NeedsApproval + ": " + oneLine(approvalReason(*s))
	}
	if stateWord(*s) == statewords.NeedsLogin {
		return "needs login: run `plexus login " + s.Name + "`"
	}
	switch st := stateWord(*s); st {
	case apitype.StateReady:
		return fmt.Sprintf("%s, %s", st, plural(s.Tools, "tool")) + heldSuffix(*s)
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

// stateColumn is the STATE of ls and status: the daemon's word, with the
// time left before the next try of a server in backoff ("backoff 4s"), and
// "crash-looping 9m" for a parked one, so that people can tell a server
// that will be back in a moment from one that needs them.
func stateColumn(s apitype.ServerStatus, now time.Time) string {
	switch word := stateWord(s); word {
	case statewords.NeedsApproval:
		return word
	case statewords.Backoff, statewords.CrashLooping:
		if s.NextTryAt == nil {
			return word
		}
		return word + " " + shortDuration(s.NextTryAt.Sub(now))
	default:
		return word + statewords.Where(s) + heldSuffix(s)
	}
}

// stateDetail describes a server's state as of at, for a line of its own:
// "ready, 4 tools", "backoff (next try in 4s): connection lost".
func stateDetail(s apitype.ServerStatus, at time.Time) string {
	if s.NeedsApproval {
		return statewords.NeedsApproval + ": " + oneLine(approvalReason(s))
	}
	word := stateWord(s)
	if !troubled(s) {
		if word == apitype.StateReady || word == statewords.Idle {
			return fmt.Sprintf("%s%s, %s", word, statewords.Where(s), plural(s.Tools, "tool")) + heldSuffix(s)
		}
		return word + statewords.Where(s)
	}
	if s.NextTryAt != nil {
		word += " (next try in " + shortDuration(s.NextTryAt.Sub(at)) + ")"
	}
	if e := oneLine(s.LastError); e != "" {
		word += ": " + e
	}
	return word
}

// shortDuration shows d rounded to its largest unit: "4s", "9m", "2h",
// "1h30m". A time already past shows as "0s": the try is due.
func shortDuration(d time.Duration) string {
	d = max(d, 0)
	if s := d.Round(time.Second); s < time.Minute {
		return fmt.Sprintf("%ds", s/time.Second)
	}
	m := d.Round(time.Minute)
	switch {
	case m < time.Hour:
		return fmt.Sprintf("%dm", m/time.Minute)
	case m%time.Hour == 0:
		return fmt.Sprintf("%dh", m/time.Hour)
	}
	return fmt.Sprintf("%dh%dm", m/time.Hour, m%time.Hour/time.Minute)
}

// serverTable renders the NAME STATE TYPE TOOLS ERROR table of ls and status.
func serverTable(servers []apitype.ServerStatus, now time.Time) *table {
	t := &table{header: []string{"NAME", "STATE", "TYPE", "TOOLS", "ERROR"}}
	for _, s := range servers {
		// A server that recovered keeps its last error in --json and status
		// detail; the table shows only what needs attention now.
		errText := s.LastError
		if s.State == apitype.StateReady {
			errText = ""
			if len(s.Warnings) > 0 {
				errText = "warning: " + s.Warnings[0]
			}
		}
		if p := pinsNote(s); p != "" {
			errText = p
		}
		typ := s.Type
		if s.Sandbox != "" {
			typ += ", sandboxed"
		}
		t.add(s.Name, stateColumn(s, now), typ, fmt.Sprint(s.Tools), errText)
	}
	return t
}

// troubled reports whether a server needs attention: it failed, waits to
// be restarted, or is parked in a crash loop.
func troubled(s apitype.ServerStatus) bool {
	return s.CrashLooping || s.State == apitype.StateFailed || s.State == apitype.StateBackoff || s.State == apitype.StateNeedsLogin
}

// stderrShown is how many of its last stderr lines status shows for a
// troubled server; `plexus logs` shows them all.
const stderrShown = 3

// writeTroubles details, below the table of status, each server that needs
// attention: its whole last error, the exit code or HTTP status behind it,
// how often it was restarted and its last words on stderr.
func writeTroubles(w io.Writer, servers []apitype.ServerStatus, now time.Time) error {
	var b strings.Builder
	for _, s := range servers {
		if !troubled(s) && pinsNote(s) == "" {
			continue
		}
		name := oneLine(s.Name)
		fmt.Fprintf(&b, "\n%s: %s\n", name, stateColumn(s, now))
		item := func(key, value string) { fmt.Fprintf(&b, "  %-12s %s\n", key, value) }
		writePinsItems(item, s)
		if !troubled(s) {
			continue
		}
		for i, line := range nonBlankLines(s.LastError) {
			if i == 0 {
				item("error", line)
			} else {
				item("", line)
			}
		}
		if s.ExitCode != nil {
			item("exit code", fmt.Sprint(*s.ExitCode))
		}
		if s.HTTPStatus != 0 {
			item("HTTP status", fmt.Sprint(s.HTTPStatus))
		}
		item("restarts", fmt.Sprint(s.Restarts))
		if len(s.Stderr) > 0 {
			fmt.Fprintf(&b, "  last stderr (all of it: plexus logs %s)\n", name)
			for _, line := range s.Stderr[max(0, len(s.Stderr)-stderrShown):] {
				b.WriteString("    " + logLine(line) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// nonBlankLines splits s into its non-blank lines, cleaned for the terminal.
func nonBlankLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(sanitize(line)); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// logLine cleans one stderr line of a server for the terminal: sanitized,
// and kept on one line, so that one line cannot pose as several.
func logLine(s string) string {
	return strings.ReplaceAll(sanitize(s), "\n", " ")
}

// warnAll prints the daemon's warnings about a result to stderr.
func (a *app) warnAll(warnings []string) {
	for _, w := range warnings {
		a.warnf("%s", sanitize(w))
	}
}
