package audit

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

// secretName matches the names of members that hold secrets, as
// serverconf matches a URL's key-like query parameters.
var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|pwd|auth|credential|signature|^sig$|session|cookie)`)

// redactPayload redacts r's Arguments and Result: every string passes
// through redact (the server's own secrets — its connection's redactor),
// and the value of every member whose name is a secret's (token,
// password, api_key, …) is replaced whole.
func (r *Record) redactPayload(redact func(string) string) {
	r.Arguments = redactJSON(r.Arguments, redact)
	r.Result = redactJSON(r.Result, redact)
}

// redactJSON returns raw with secrets replaced; a payload that is not
// JSON is not recorded at all.
func redactJSON(raw json.RawMessage, redact func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return json.RawMessage(`"[not JSON: not recorded]"`)
	}
	out, err := json.Marshal(redactValue(v, redact))
	if err != nil {
		return nil
	}
	return out
}

func redactValue(v any, redact func(string) string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			name := k
			if redact != nil {
				name = redact(k) // a secret may be a member's name too
			}
			if _, isObj := x.(map[string]any); !isObj && secretName.MatchString(k) {
				out[name] = Redacted
				continue
			}
			out[name] = redactValue(x, redact)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = redactValue(x, redact)
		}
		return v
	case string:
		if redact != nil {
			return redact(v)
		}
	}
	return v
}
