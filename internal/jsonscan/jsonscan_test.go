package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var seeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"jsonrpc":"2.0","id":"plexus-frame-1","result":{"content":[{"type":"text","text":"x"}]}}`,
	`{"a":"}\"]{","b":[1,{"c":[]}],"d":null,"e":true,"f":-1.5e3}`,
	"{\n\t\"a\" : [ ] ,\r\n \"b\":{ }\n}", `{"a\"b":1}`, `{"a":1,"a":2}`, `[1,2]`, `"x"`, `12`, `{"x":"\\"}`,
	`{"params":{"name":"echo","arguments":{"text":"é\u00e9"},"_meta":{"progressToken":1}}}`,
}

// check is the property: on valid JSON, Members agrees with encoding/json
// whenever it says yes, and says no only for what it must refuse.
func check(t *testing.T, b []byte) {
	var got []string
	raw := map[string]json.RawMessage{}
	ok := Members(b, func(k, v []byte) bool {
		got = append(got, string(k))
		raw[string(k)] = append(json.RawMessage(nil), v...)
		return true
	})
	if !json.Valid(b) {
		return // a precondition: only that it does not panic
	}
	var want map[string]json.RawMessage
	isObject := json.Unmarshal(b, &want) == nil && want != nil
	escaped := false
	var keys []string
	if isObject {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.Token()
		for dec.More() {
			tok, _ := dec.Token()
			keys = append(keys, tok.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		escaped = bytes.Contains(b, []byte(`\`)) || !utf8.Valid(b) // a key may hold one: then refusing is allowed
	}
	switch {
	case !isObject && ok:
		t.Fatalf("%q: not an object, yet members %q", b, got)
	case isObject && !ok && !escaped:
		t.Fatalf("%q: an object without escapes refused", b)
	case ok:
		if strings.Join(got, "\x00") != strings.Join(keys, "\x00") {
			t.Fatalf("%q: keys %q, encoding/json %q", b, got, keys)
		}
		for k, v := range want {
			if len(keys) == len(want) && !bytes.Equal(raw[k], v) {
				t.Fatalf("%q: %s = %s, encoding/json %s", b, k, raw[k], v)
			}
		}
	}
}

func TestMembers(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
	var keys []string
	Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, _ []byte) bool { keys = append(keys, string(k)); return string(k) != "b" })
	if strings.Join(keys, ",") != "a,b" {
		t.Fatalf("stopping at b: saw %v", keys)
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{`"echo"`: "echo", `""`: ""} {
		if s, ok := String([]byte(in)); !ok || string(s) != want {
			t.Errorf("String(%s) = %q, %v", in, s, ok)
		}
	}
	for _, in := range []string{`"a\"b"`, `12`, `"`, ``, `null`} {
		if _, ok := String([]byte(in)); ok {
			t.Errorf("String(%s) accepted", in)
		}
	}
}

func FuzzMembers(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(check)
}
