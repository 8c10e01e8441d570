package importer

import (
	"math"
	"regexp"
	"strings"
)

// Not every literal in another client's file is a secret: DEBUG=1, a
// folder, a log level or an empty string are settings, and moving them to
// the secret store hides them from the user and makes the redactor cut
// "1" out of every line. A value is judged a secret by its name or by its
// shape; everything else stays a plain value, visible and editable.

// secretName matches the names of variables and headers that hold secrets.
var secretName = regexp.MustCompile(`(?i)(token|key|secret|passw|pwd|auth|credential|private|cookie|session|signature)`)

// bearerValue matches a value written as an Authorization header would be.
var bearerValue = regexp.MustCompile(`(?i)^(bearer|basic|token)[ \t]+\S`)

// embedded matches a secret inside a longer value, such as a JSON object
// of headers in one variable: a bearer value or a well-known token.
var embedded = regexp.MustCompile(`(?i)\b(bearer|basic)[ \t]+[A-Za-z0-9._~+/=-]{8,}|\b(ghp_|gho_|github_pat_|glpat-|xox[abpr]-|sk-|sk_live_|ntn_|secret_)[A-Za-z0-9_\-]{12,}`)

// commonValues are values too common to be anyone's secret.
var commonValues = map[string]bool{
	"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"null": true, "none": true, "debug": true, "info": true, "warn": true, "error": true,
}

// secretWhy says why a literal value named key looks like a secret, or ""
// when it is a plain value.
func secretWhy(key, value string) string {
	v := strings.TrimSpace(value)
	if trivial(v) {
		return ""
	}
	switch {
	case secretName.MatchString(key):
		return "its name says it is a secret"
	case tokenPrefix.MatchString(v):
		return "it has the shape of an access token"
	case credURL.MatchString(v):
		return "a URL with a password in it"
	case bearerValue.MatchString(v):
		return "it is an Authorization value"
	case embedded.MatchString(v):
		return "it holds a token"
	case secretQueryIn(v):
		return "a URL with a key in its query"
	case highEntropy(v):
		return "it looks random, as keys do"
	}
	return ""
}

// trivial values are never secrets: empty, a short word or number, a
// common setting.
func trivial(v string) bool {
	return len(v) < 4 || commonValues[strings.ToLower(v)]
}

// secretQueryIn reports whether v is a URL whose query holds a key-like
// parameter with a value.
func secretQueryIn(v string) bool {
	if !strings.Contains(v, "://") {
		return false
	}
	_, q, ok := strings.Cut(v, "?")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(q, "&") {
		if k, val, ok := strings.Cut(part, "="); ok && val != "" && secretQuery.MatchString(k) {
			return true
		}
	}
	return false
}

// highEntropy reports whether v looks like a random key: one word of at
// least 20 characters, letters mixed with digits (at least one in eight
// characters a digit: names of things have few), with at least 3.5 bits
// of entropy per character. Paths, URLs and words with separators are
// settings, however long.
func highEntropy(v string) bool {
	if len(v) < 20 || isPath(v) || strings.Contains(v, "://") || strings.ContainsAny(v, " \t.,;:@") {
		return false
	}
	var letters bool
	digits := 0
	counts := map[rune]int{}
	n := 0
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters = true
		}
		counts[r]++
		n++
	}
	if !letters || digits*8 < n {
		return false
	}
	bits := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		bits -= p * math.Log2(p)
	}
	return bits >= 3.5
}
