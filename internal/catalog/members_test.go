package catalog

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestWithMember(t *testing.T) {
	for _, tc := range []struct {
		obj, key, value, want string
	}{
		{`{"name":"a","x":1}`, "name", `"b"`, `{"name":"b","x":1}`},
		{` { "x" : [1, 2] ,"name" : "a" } `, "name", `"b"`, ` { "x" : [1, 2] ,"name" : "b" } `},
		{`{"x":1}`, "name", `"b"`, `{"name":"b","x":1}`},
		{`{}`, "name", `"b"`, `{"name":"b"}`},
		{` {  } `, "name", `"b"`, ` {"name":"b"  } `},
		{`{"name":"a","name":"c"}`, "name", `"b"`, `{"name":"a","name":"b"}`}, // the last counts, as encoding/json reads it
		{`{"n\u0061me":"a"}`, "name", `"b"`, `{"n\u0061me":"b"}`},
		{`{"nested":{"name":"a"}}`, "name", `"b"`, `{"name":"b","nested":{"name":"a"}}`},
	} {
		got, err := WithMember(json.RawMessage(tc.obj), tc.key, json.RawMessage(tc.value))
		if err != nil || string(got) != tc.want {
			t.Errorf("WithMember(%s, %s, %s) = %s, %v; want %s", tc.obj, tc.key, tc.value, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `{"a":1`, ``, `{"a" 1}`} {
		if got, err := WithMember(json.RawMessage(bad), "a", json.RawMessage(`1`)); err == nil {
			t.Errorf("WithMember(%q) = %s, want an error", bad, got)
		}
	}
}

func TestWithName(t *testing.T) {
	raw := json.RawMessage(`{"name":"echo", "_meta":{"k":[1, 2]}}`)
	same, err := WithName(raw, "echo")
	if err != nil || &same[0] != &raw[0] {
		t.Errorf("WithName to its own name = %s, %v; want the definition itself", same, err)
	}
	got, err := WithName(raw, `mcp_s_echo_"x"`)
	if want := `{"name":"mcp_s_echo_\"x\"", "_meta":{"k":[1, 2]}}`; err != nil || string(got) != want {
		t.Errorf("WithName = %s, %v; want %s", got, err, want)
	}
	if string(raw) != `{"name":"echo", "_meta":{"k":[1, 2]}}` {
		t.Errorf("WithName changed its input: %s", raw)
	}
}

// FuzzWithMember: for any JSON object, WithMember gives valid JSON that
// reads as the object with the member set, and changes nothing else.
func FuzzWithMember(f *testing.F) {
	for _, s := range []string{`{"name":"a","x":1}`, `{}`, ` {"a":{"name":[1]} , "name" : null}`, `{"n\u0061me":1,"name":2}`} {
		f.Add(s, "name")
	}
	f.Fuzz(func(t *testing.T, obj, key string) {
		if !utf8.ValidString(key) {
			return // a key is the caller's, always text
		}
		var before map[string]any
		if json.Unmarshal([]byte(obj), &before) != nil || before == nil {
			if _, err := WithMember(json.RawMessage(obj), key, json.RawMessage(`"v"`)); err == nil && !json.Valid([]byte(obj)) {
				t.Fatalf("WithMember took %q, which is not JSON", obj)
			}
			return
		}
		got, err := WithMember(json.RawMessage(obj), key, json.RawMessage(`"v"`))
		if err != nil {
			t.Fatalf("WithMember(%q): %v", obj, err)
		}
		var after map[string]any
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("WithMember(%q, %q) = %q, not JSON: %v", obj, key, got, err)
		}
		before[key] = "v"
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("WithMember(%q, %q) = %q, reads as %v, want %v", obj, key, got, after, before)
		}
	})
}
