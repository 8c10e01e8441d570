package audit

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRedact: whatever a client sends as arguments (or a server as a
// result), the recorded payload is valid JSON and holds neither the
// server's secret nor the value of a secret-named member.
func FuzzRedact(f *testing.F) {
	const secret = "s3cr3t-value"
	for _, seed := range []string{
		`{"q":"a s3cr3t-value b","token":"x","n":[1,{"password":"p"}]}`,
		`"s3cr3t-value"`, `[]`, `null`, `{"a":`, `{"key":{"inner":"s3cr3t-value"}}`, `{"s3cr3t-value":1}`, "\"\\u0073\"", `1e999`,
	} {
		f.Add([]byte(seed))
	}
	redact := strings.NewReplacer(secret, Redacted).Replace
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := redactJSON(raw, redact)
		if len(raw) == 0 {
			if out != nil {
				t.Fatalf("empty payload recorded as %s", out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("recorded payload is not JSON: %q from %q", out, raw)
		}
		var v any
		json.Unmarshal(out, &v)
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if strings.Contains(k, secret) {
						t.Fatalf("the secret survived in a member's name %q", k)
					}
					if _, obj := x.(map[string]any); !obj && secretName.MatchString(k) && x != Redacted {
						t.Fatalf("member %q kept its value %v", k, x)
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			case string:
				if strings.Contains(v, secret) {
					t.Fatalf("the secret survived in %q", v)
				}
			}
		}
		walk(v)
	})
}
