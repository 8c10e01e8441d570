package upstream

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of the stderr ring (R-RUN-2).
const (
	ringLines   = 200
	maxLineSize = 4 << 10
)

// lineRing keeps the last ringLines lines.
type lineRing struct {
	onAdd func(string) // optional; called after each line is kept
	// explain, if set, may return Plexus's own line about a line, kept
	// after it (a sandbox's denial); set before the first line.
	explain func(string) string

	mu    sync.Mutex
	lines [ringLines]string // guarded by mu
	next  int               // guarded by mu; where the next line goes
	count int               // guarded by mu
}

func (r *lineRing) add(line string) {
	r.mu.Lock()
	r.lines[r.next] = line
	r.next = (r.next + 1) % ringLines
	r.count = min(r.count+1, ringLines)
	r.mu.Unlock()
	if r.onAdd != nil {
		r.onAdd(line)
	}
	if r.explain != nil {
		if msg := r.explain(line); msg != "" {
			r.add(msg)
		}
	}
}

// snapshot returns the lines, oldest first.
func (r *lineRing) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, r.count)
	for i := range r.count {
		out = append(out, r.lines[(r.next-r.count+i+ringLines)%ringLines])
	}
	return out
}

// last returns at most n of the newest lines, oldest first.
func (r *lineRing) last(n int) []string {
	all := r.snapshot()
	return all[max(0, len(all)-n):]
}

// readStderr copies the server's stderr into the ring and the log, line by
// line, until EOF. It never lets stderr reach the MCP stream: it is a pipe of
// its own. (MCP stdio transport: "The server MAY write UTF-8 strings to its
// standard error (stderr) for logging purposes. Clients MAY capture, forward,
// or ignore this logging.")
func readStderr(rd io.Reader, ring *lineRing, red *redactor, log *slog.Logger) {
	// Room for a whole secret past the cut, so that redaction sees it before
	// the line is cut (a cut secret would otherwise leak its prefix).
	br := bufio.NewReaderSize(rd, maxLineSize+red.longest+1)
	var lim logLimiter
	defer lim.flush(log)
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			line := red.String(strings.TrimRight(string(frag), "\r\n"))
			if errors.Is(err, bufio.ErrBufferFull) {
				discardLine(br)
				err = nil
			}
			line = cutLine(line)
			ring.add(line)
			if lim.allow(time.Now(), log) {
				log.Info("server stderr", "line", line)
			}
		}
		if err != nil {
			return
		}
	}
}

// stderrLogRate bounds how many stderr lines per second of one server go to
// the log file: a server flooding stderr must not fill the disk. The ring
// and the event stream still see every line.
const stderrLogRate = 50

// logLimiter admits stderrLogRate lines per one-second window and counts
// the rest.
type logLimiter struct {
	window     time.Time
	n          int
	suppressed int
}

func (l *logLimiter) allow(now time.Time, log *slog.Logger) bool {
	if now.Sub(l.window) >= time.Second {
		l.flush(log)
		l.window, l.n = now, 0
	}
	l.n++
	if l.n > stderrLogRate {
		l.suppressed++
		return false
	}
	return true
}

func (l *logLimiter) flush(log *slog.Logger) {
	if l.suppressed > 0 {
		log.Warn("server stderr lines not logged", "suppressed", l.suppressed, "reason", "more than 50 lines per second")
		l.suppressed = 0
	}
}

// discardLine skips the rest of an over-long line.
func discardLine(br *bufio.Reader) {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// cutLine bounds a line to maxLineSize bytes of valid UTF-8.
func cutLine(s string) string {
	if len(s) > maxLineSize {
		i := maxLineSize
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + " [cut]"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// redactor replaces secrets in text, and in remote mode the raw URL by its
// sanitized form.
type redactor struct {
	r       *strings.Replacer
	longest int // length of the longest secret
}

// redactedText is what a secret is replaced with.
const redactedText = "[redacted]"

// newRedactor builds a redactor for secrets and for extra old→new pairs.
func newRedactor(secrets []string, extra ...string) *redactor {
	type pair struct{ old, new string }
	var pairs []pair
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i] != "" && extra[i] != extra[i+1] {
			pairs = append(pairs, pair{extra[i], extra[i+1]})
		}
	}
	longest := 0
	for _, s := range secrets {
		if redactable(s) {
			pairs = append(pairs, pair{s, redactedText})
			longest = max(longest, len(s))
		}
	}
	// The Replacer tries olds in argument order at each position: the longest
	// first, so a secret that contains another is replaced whole.
	slices.SortStableFunc(pairs, func(a, b pair) int { return len(b.old) - len(a.old) })
	var args []string
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return &redactor{r: strings.NewReplacer(args...), longest: longest}
}

func (r *redactor) String(s string) string { return r.r.Replace(s) }

// minRedacted is the shortest value the redactor replaces.
const minRedacted = 4

// redactable reports whether a secret's value is worth replacing in text.
// A value so short or common that it is everywhere — "1", "true", an
// empty string — would garble every line it was cut out of while hiding
// nothing an attacker could not guess.
func redactable(v string) bool {
	if len(strings.TrimSpace(v)) < minRedacted {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "test", "info", "debug", "warn", "error":
		return false
	}
	return true
}

// Error returns err with a redacted message; errors.Is and errors.As still see
// the original chain (whose own messages are not redacted).
func (r *redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
