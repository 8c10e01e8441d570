package catcache

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample() Entry {
	return Entry{
		Key:       Key(map[string]string{"command": "srv"}),
		Listed:    time.Unix(1700000000, 0).UTC(),
		Init:      json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"instructions":"hi"}`),
		Tools:     []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"},"x-own":[1,2]}`)},
		Resources: []json.RawMessage{json.RawMessage(`{"uri":"file:///a","name":"a"}`)},
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"file:///{p}","name":"t"}`)},
		Prompts:   []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
	}
}

// TestStoreKeepsTheServersBytes: what is put is read back by a new Store
// byte for byte, in a 0600 file; another definition's key finds nothing.
func TestStoreKeepsTheServersBytes(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := sample()
	if err := s.Put("a", e); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s2.Get("a", e.Key)
	if !ok {
		t.Fatal("entry not read back")
	}
	if string(got.Tools[0]) != string(e.Tools[0]) || string(got.Init) != string(e.Init) {
		t.Errorf("bytes changed: %s %s", got.Tools[0], got.Init)
	}
	if _, ok := s2.Get("a", Key("other")); ok {
		t.Error("an entry of another definition was used")
	}
	if err := s2.Forget("a"); err != nil {
		t.Fatal(err)
	}
	s3, _ := Open(dir)
	if len(s3.Names()) != 0 {
		t.Errorf("forgotten entry still there: %v", s3.Names())
	}
}

// TestCorruptCacheStartsOver: a file that does not decode gives an error
// (the daemon logs it) and an empty cache, and the next save replaces it.
func TestCorruptCacheStartsOver(t *testing.T) {
	good, _ := Encode(map[string]Entry{"a": sample()})
	for name, data := range map[string]string{
		"truncated":    string(good[:len(good)/2]),
		"trailing":     string(good) + "]",
		"unknown key":  `{"version":1,"servers":{},"extra":1}`,
		"version":      `{"version":2,"servers":{}}`,
		"tool no name": strings.Replace(string(good), `"name":"echo"`, `"nom":"echo"`, 1),
		"tool not obj": strings.Replace(string(good), `{"name":"echo"`, `["name","echo"`, 1),
		"no key":       strings.Replace(string(good), sample().Key, "abc", 1),
		"init not obj": `{"version":1,"servers":{"a":{"key":"` + sample().Key + `","listed":"2024-01-01T00:00:00Z","initialize":[1]}}}`,
		"binary":       "\x00\xff",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, FileName), []byte(data), 0o600)
			s, err := Open(dir)
			if err == nil {
				t.Fatalf("no error for %q", data)
			}
			if len(s.Names()) != 0 {
				t.Fatal("a corrupt cache was used in part")
			}
			if err := s.Put("b", sample()); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(dir); err != nil {
				t.Fatalf("the save did not replace the corrupt file: %v", err)
			}
		})
	}
}

// FuzzDecode: no input crashes the decoder, and what it accepts encodes
// and decodes again to the same servers with the same lists.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(map[string]Entry{"a": sample()})
	f.Add(good)
	f.Add([]byte(`{"version":1,"servers":{}}`))
	f.Add([]byte(`{"version":1,"servers":{"x":{"key":"` + strings.Repeat("0", 64) + `","listed":"2024-01-01T00:00:00Z","tools":[{"name":"t"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		out, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted input does not encode: %v", err)
		}
		m2, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded input does not decode: %v\n%s", err, out)
		}
		if len(m2) != len(m) {
			t.Fatalf("servers %d, then %d", len(m), len(m2))
		}
		for k, e := range m {
			if !sameLists(e, m2[k]) {
				t.Fatalf("server %q: the bytes changed through a save", k)
			}
		}
	})
}
