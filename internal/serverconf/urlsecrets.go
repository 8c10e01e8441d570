package serverconf

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// secretParam matches the names of query parameters that carry keys and
// tokens (api_key, access_token, apiKey, sig, …).
var secretParam = regexp.MustCompile(`(?i)(key|token|secret|passw|pwd|auth|credential|signature|^sig$|session)`)

// URLSecret is one query value moved out of a URL.
type URLSecret struct {
	Param string // the query parameter, as written
	Var   string // the managed variable that now holds its value
	Value string
}

// MoveURLSecrets takes the values of a URL's key-like query parameters
// (api_key=…, token=…) out of it: each becomes the managed variable
// <SERVER>_<PARAM> and the URL refers to it as ${VAR}, so that the
// settings, the forms and every listing show the name and never the value.
// Values that are already a placeholder, and short or common ones (a
// flag such as auth=1), stay. A URL that does not parse is returned as is,
// for the daemon to refuse with its own message.
func MoveURLSecrets(server, raw string) (string, []URLSecret) {
	base, query, ok := strings.Cut(raw, "?")
	if !ok || query == "" {
		return raw, nil
	}
	frag := ""
	if i := strings.IndexByte(query, '#'); i >= 0 {
		query, frag = query[:i], query[i:]
	}
	var moved []URLSecret
	parts := strings.Split(query, "&")
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok || !secretParam.MatchString(k) || strings.Contains(v, "${") {
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			continue
		}
		if len(val) < 4 || commonValue(val) {
			continue
		}
		name := k
		if dk, err := url.QueryUnescape(k); err == nil {
			name = dk
		}
		// One variable per parameter, even when a URL repeats it.
		ref := VarFor(server, name)
		for n := 2; taken(moved, ref, val); n++ {
			ref = VarFor(server, name) + "_" + strconv.Itoa(n)
		}
		moved = append(moved, URLSecret{Param: name, Var: ref, Value: val})
		parts[i] = k + "=${" + ref + "}"
	}
	if len(moved) == 0 {
		return raw, nil
	}
	return base + "?" + strings.Join(parts, "&") + frag, dedupe(moved)
}

func commonValue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "none", "null", "basic", "bearer", "oauth", "debug":
		return true
	}
	return false
}

// taken reports whether ref already holds a different value.
func taken(moved []URLSecret, ref, val string) bool {
	for _, m := range moved {
		if m.Var == ref && m.Value != val {
			return true
		}
	}
	return false
}

func dedupe(moved []URLSecret) []URLSecret {
	var out []URLSecret
	seen := map[string]bool{}
	for _, m := range moved {
		if !seen[m.Var] {
			seen[m.Var] = true
			out = append(out, m)
		}
	}
	return out
}
