package pgstore

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// FuzzParseKey: a key file either parses to KeySize bytes or is refused
// with an error that does not quote it.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, KeySize)) + "\n"))
	f.Add([]byte(""))
	f.Add([]byte("not base64 at all!"))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte("short"))))
	// What the errors say of themselves: an input that is part of it is
	// not quoted.
	var own string
	for _, in := range []string{"", "!!!!", "c2hvcnQ="} {
		_, err := ParseKey([]byte(in))
		own += err.Error() + "\n"
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := ParseKey(data)
		if err != nil {
			if s := strings.TrimSpace(string(data)); len(s) > 8 && strings.Contains(err.Error(), s) && !strings.Contains(own, s) {
				t.Fatalf("the error quotes the key file: %v", err)
			}
			return
		}
		if len(key) != KeySize {
			t.Fatalf("parsed a key of %d bytes", len(key))
		}
	})
}

// FuzzOpen: a stored value opens only as it was sealed, for its own
// document: any other bytes, or a sealed value with any byte changed, are
// refused (and nothing panics).
func FuzzOpen(f *testing.F) {
	k := Keys{Current: bytes.Repeat([]byte{1}, KeySize), Old: [][]byte{bytes.Repeat([]byte{2}, KeySize)}}
	plains := [][]byte{[]byte(`{"env":{}}`), []byte("old")}
	good, err := k.seal("creds.json", plains[0])
	if err != nil {
		f.Fatal(err)
	}
	old, _ := Keys{Current: k.Old[0]}.seal("creds.json", plains[1])
	f.Add(good, []byte{}, 0)
	f.Add([]byte("PX1"), []byte{1}, 40)
	f.Add([]byte{}, []byte{0, 0, 3}, 3)
	f.Fuzz(func(t *testing.T, raw, flip []byte, at int) {
		if plain, _, err := k.open("creds.json", raw); err == nil && !bytes.Equal(plain, plains[0]) && !bytes.Equal(plain, plains[1]) {
			t.Fatalf("bytes that were never sealed opened: %q", plain)
		}
		for _, sealed := range [][]byte{good, old} {
			changed := bytes.Clone(sealed)
			for i, b := range flip {
				changed[((at+i)%len(changed)+len(changed))%len(changed)] ^= b
			}
			_, _, err := k.open("creds.json", changed)
			if bytes.Equal(changed, sealed) {
				if err != nil {
					t.Fatalf("a sealed value does not open: %v", err)
				}
				if _, _, err := k.open("oauth.json", changed); err == nil {
					t.Fatal("a value opened as another document")
				}
			} else if err == nil {
				t.Fatal("a changed value opened")
			}
		}
	})
}
