package importer

import (
	"strconv"
	"strings"
)

// maxName is the longest server name Plexus takes (R-CFG-2).
const maxName = 32

// nameChoice is the Plexus name of an entry, and why it differs from the
// file's, if it does.
type nameChoice struct {
	name, reason string
}

// assignNames gives every entry that is not skipped a Plexus name matching
// ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$. Names that are valid already are kept,
// and win over names that had to change; a changed name that collides
// gets a suffix, -2, -3, …, in the order of the entries' sources.
func assignNames(entries []rawEntry) map[int]nameChoice {
	out := map[int]nameChoice{}
	taken := map[string]bool{}
	var later []int
	for i, e := range entries {
		if e.skip != "" || e.noName {
			continue
		}
		if validName(e.original) && !taken[e.original] {
			out[i] = nameChoice{name: e.original}
			taken[e.original] = true
			continue
		}
		later = append(later, i)
	}
	for _, i := range later {
		orig := entries[i].original
		base, reason := normalizeName(orig)
		name := base
		for n := 2; taken[name]; n++ {
			suffix := "-" + strconv.Itoa(n)
			name = strings.TrimRight(base[:min(len(base), maxName-len(suffix))], "-_") + suffix
		}
		if name != base {
			if reason == "" {
				reason = "the name is taken by another entry"
			} else {
				reason += "; " + base + " is taken by another entry"
			}
		}
		taken[name] = true
		out[i] = nameChoice{name: name, reason: reason}
	}
	return out
}

// normalizeName turns s into a valid name and says what was wrong with it.
func normalizeName(s string) (string, string) {
	if validName(s) {
		return s, ""
	}
	var b strings.Builder
	dash := false
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			r = '-'
		}
		if r == '-' && dash {
			continue
		}
		dash = r == '-'
		b.WriteRune(r)
	}
	name := strings.TrimLeft(b.String(), "-_")
	var reasons []string
	if name != s {
		reasons = append(reasons, "a name holds only letters, digits, '_' and '-', starting with a letter or digit")
	}
	if len(name) > maxName {
		name = name[:maxName]
		reasons = append(reasons, "a name has at most 32 characters")
	}
	name = strings.TrimRight(name, "-")
	if name == "" {
		name = "server"
	}
	return name, strings.Join(reasons, "; ")
}

// validName is the rule for server names (R-CFG-2).
func validName(s string) bool {
	if len(s) < 1 || len(s) > maxName {
		return false
	}
	c := s[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !isVarChar(c) && c != '-' {
			return false
		}
	}
	return true
}
