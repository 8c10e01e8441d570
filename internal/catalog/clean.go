package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean removes from s what a person reading a tool list cannot see but a
// model reads all the same (R-CAT-7), so that a description cannot carry
// hidden instructions:
//
//   - format characters (Unicode category Cf): zero-width spaces and joiners
//     U+200B..U+200F, word joiners U+2060..U+2064, the BOM U+FEFF, bidi
//     controls U+202A..U+202E and U+2066..U+2069, soft hyphens, and the tag
//     characters U+E0000..U+E007F used for "ASCII smuggling";
//   - control characters other than tab, newline and carriage return
//     (terminal escape sequences can hide or rewrite text on screen);
//   - variation selectors and other invisible fillers that can encode data
//     one invisible rune at a time;
//   - invalid UTF-8;
//   - HTML comments <!-- ... -->, which Markdown renderers hide; an
//     unterminated comment is removed to the end of the text.
//
// Line and paragraph separators become newlines, and surrounding white space
// is trimmed. Clean(Clean(s)) == Clean(s).
func Clean(s string) string {
	// Invisible characters go first: otherwise "<!\u200b--" would survive the
	// comment pass and turn into a comment opener afterwards.
	return strings.TrimSpace(stripComments(stripInvisible(s)))
}

// WireText is s as Plexus passes it on in a definition it otherwise keeps
// as the server wrote it: cleaned of what hides text (R-CAT-7) — invisible
// characters and HTML comments, as Clean — but not trimmed, and keeping
// one emoji presentation selector (U+FE0E, U+FE0F) after a visible
// character, where it only chooses how that character looks; a run of
// selectors, or one elsewhere, can carry hidden data and goes. Text that
// hides nothing comes back unchanged, so that a definition is passed on
// byte for byte.
func WireText(s string) string {
	if c := stripComments(stripInvisibleWire(s)); c != s {
		return c
	}
	return s
}

func isPresentationSelector(r rune) bool { return r == '\uFE0E' || r == '\uFE0F' }

// stripInvisibleWire is stripInvisible for WireText: line separators stay
// as they are, and a lone presentation selector after a visible character
// stays.
func stripInvisibleWire(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	prevVisible := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
		case isPresentationSelector(r) && prevVisible:
			b.WriteRune(r)
			prevVisible = false
		case isInvisible(r):
		default:
			b.WriteRune(r)
			prevVisible = !unicode.IsSpace(r)
		}
	}
	return b.String()
}

func stripInvisible(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			// Invalid byte: drop it rather than guess what it meant.
		case r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case isInvisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isInvisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r):
		return true
	case unicode.Is(unicode.Variation_Selector, r):
		// U+FE00..FE0F, U+180B..180D/F, U+E0100..E01EF: each can carry a few
		// bits invisibly. Losing an emoji presentation hint is harmless.
		return true
	}
	switch r {
	case '\u034f', // combining grapheme joiner
		'\u115f', '\u1160', '\u3164', '\uffa0': // Hangul fillers: blank, not spaces
		return true
	}
	return false
}

const (
	commentOpen  = "<!--"
	commentClose = "-->"
)

// stripComments removes HTML comments in one pass. It checks for an opener
// at the end of what it has kept so far rather than in the input, so an
// opener assembled from pieces around a removed comment ("<!<!-- x -->--")
// is caught too, and the result never contains "<!--".
func stripComments(s string) string {
	if !strings.Contains(s, commentOpen) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if len(out) < len(commentOpen) || string(out[len(out)-len(commentOpen):]) != commentOpen {
			continue
		}
		out = out[:len(out)-len(commentOpen)]
		end := strings.Index(s[i+1:], commentClose)
		if end < 0 {
			break // unterminated: the rest is comment
		}
		i += end + len(commentClose)
	}
	return string(out)
}

// truncate shortens s to at most max runes, ending it with "…" when it cut
// something, and reports whether it did.
func truncate(s string, max int) (string, bool) {
	if utf8.RuneCountInString(s) <= max {
		return s, false
	}
	if max <= 0 {
		return "", true
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…", true
		}
		n++
	}
	return s, false // unreachable: the rune count said otherwise
}

// oneLine cleans s for use inside a list in a generated description: white
// space runs, including newlines that could fake a new list item or heading,
// become one space, and the result is at most max runes.
func oneLine(s string, max int) string {
	t, _ := truncate(strings.Join(strings.Fields(Clean(s)), " "), max)
	return t
}
