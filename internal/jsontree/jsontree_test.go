package jsontree

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	root, err := Parse([]byte(`{"a": 1, "b": [true, null, "x"], "a": {"c": "d"}}`), 8)
	if err != nil {
		t.Fatal(err)
	}
	if root.Kind != Object || len(root.Members) != 3 {
		t.Fatalf("root %+v", root)
	}
	a1, b, a2 := root.Members[0], root.Members[1], root.Members[2]
	if a1.Key != "a" || a1.Dup || a1.Val.Kind != Number || a1.Val.Text != "1" || a1.Offset != 3 || a1.Val.Offset != 6 {
		t.Errorf("first a: %+v %+v", a1, a1.Val)
	}
	if b.Val.Kind != Array || len(b.Val.Elems) != 3 || !b.Val.Elems[0].Bool || b.Val.Elems[1].Kind != Null || b.Val.Elems[2].Text != "x" {
		t.Errorf("b: %+v", b.Val)
	}
	if !a2.Dup || a2.Val.Kind != Object || a2.Val.Members[0].Val.Text != "d" {
		t.Errorf("second a: %+v", a2)
	}
}

func TestParseErrors(t *testing.T) {
	const canary = "canary-91ab-do-not-leak"
	for _, tc := range []struct {
		in   string
		off  int
		want string
	}{
		{`{"a": 1} x`, 9, "trailing data after the top-level value"},
		{`{"a": "` + canary + `"`, 31, "unexpected end of input"},
		{`{"a": "` + canary + `" 1}`, 32, "after object key:value pair"},
		{`[[[[1]]]]`, 3, "nested more than 2 levels deep"},
		{`{"a" "` + canary + `"}`, 5, "after object key"},
	} {
		_, err := Parse([]byte(tc.in), 2)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tc.in, err)
		}
		if se.Offset != tc.off || !strings.Contains(se.Msg, tc.want) || strings.Contains(se.Error(), canary) {
			t.Errorf("Parse(%q) = %q at %d, want %q at %d, and no input", tc.in, se.Msg, se.Offset, tc.want, tc.off)
		}
	}
}

// FuzzParse checks that Parse accepts exactly the JSON that encoding/json
// accepts, never panics, and marks a repeated key as such.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"a":2}`, `{"a":[1,{"b":null}]}`, `"x"`, `1e5`, ` true `, `{"a":1} {}`, `{"a":`, `[1,]`, "{\"\\u00e9\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := Parse(data, 1000)
		if valid := json.Valid(data); valid != (err == nil) {
			t.Fatalf("Parse(%q) = %v; json.Valid = %v", data, err, valid)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("Parse(%q) error %v", data, err)
			}
			return
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			seen := map[string]bool{}
			for _, m := range n.Members {
				if m.Dup != seen[m.Key] {
					t.Fatalf("member %q of %q: dup %v", m.Key, data, m.Dup)
				}
				seen[m.Key] = true
				walk(m.Val)
			}
			for _, e := range n.Elems {
				walk(e)
			}
		}
		walk(root)
	})
}
