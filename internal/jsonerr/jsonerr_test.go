package jsonerr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const canary = "canary-5d1e-do-not-leak"

// TestDescribe decodes broken JSON that carries a planted secret and checks
// that the description says where it broke and never repeats the input.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"token": "` + canary + `" x}`, "invalid JSON at byte"},
		{`{"args": "` + canary + `"}`, `wrong type for field "args" at byte`},
		{`"` + canary + `"`, "wrong type at byte"},
		{``, "empty or truncated"},
		{`{"args": ["` + canary, "empty or truncated"},
		{`{"` + "unknown" + `": 1}`, `unknown field "unknown"`},
	} {
		var v struct {
			Args []string `json:"args"`
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(tc.in)))
		dec.DisallowUnknownFields()
		err := dec.Decode(&v)
		if tc.in == `"`+canary+`"` {
			err = json.Unmarshal([]byte(tc.in), new([]string))
		}
		if err == nil {
			t.Fatalf("%q decoded", tc.in)
		}
		got := Describe(err)
		if !strings.Contains(got, tc.want) || strings.Contains(got, canary) {
			t.Errorf("Describe(%q) = %q, want %q and no input", tc.in, got, tc.want)
		}
	}
}
