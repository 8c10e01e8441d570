package creds

import (
	"strings"
	"testing"
)

const canary = "canary-7f3a9c-do-not-leak"

func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string
	}{
		{``, ""},
		{`{"revision":2,"env":{"A":"` + canary + `"}}`, ""},
		{`{"revision":2,"env":{},"extra":1}`, "unknown field"},
		{`{"revision":2,"env":{}} {}`, "trailing data"},
		{`{"revision":2,"env":{"A":"` + canary + `"`, "not valid"},
		{`{"env":{"1BAD":"x"}}`, "not a valid variable name"},
		{`{"env":{"A":5}}`, "wrong type"},
	} {
		_, err := Decode([]byte(tc.in))
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("Decode(%q): %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Decode(%q) = %v, want error containing %q", tc.in, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Errorf("error leaks the secret: %v", err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	f := &File{Revision: 4, Env: map[string]string{"B": "2", "A": "1"}}
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if g.Revision != 4 || g.Env["A"] != "1" || g.Env["B"] != "2" {
		t.Fatalf("round trip: %+v", g)
	}
	if got := strings.Join(g.Names(), ","); got != "A,B" {
		t.Errorf("Names = %s", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"revision":1,"env":{"A":"b"}}`))
	f.Add([]byte(`{"env":{"A":"b"}} x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data)
		if err != nil {
			return
		}
		b, err := Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
