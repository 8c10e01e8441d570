package pins

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// FuzzDecode checks that Decode never panics, that a failure is a
// *DecodeError with problems and no file, and that whatever it accepts
// survives Encode unchanged and keeps its keys and hashes consistent.
func FuzzDecode(f *testing.F) {
	s := &Store{docs: docstore.Files{Home: f.TempDir()}, now: func() time.Time { return time.Unix(1e9, 0) }}
	s.f = &File{Servers: map[string]Server{}}
	next := s.clone()
	next.Servers["docs"] = s.approved(Server{}, TrustOf(config.Server{Type: "stdio", Command: "docs", Args: []string{"--x"},
		Env: map[string]config.Ref{"T": {Env: "V"}}}))
	next.Servers["web"] = s.approved(Server{}, TrustOf(config.Server{Type: "http", URL: "https://x.example/?k=$K",
		Headers: map[string]config.Value{"A": {Env: "B"}}, OAuth: &config.OAuth{ClientID: "c"}}))
	if err := s.saveLocked(next, ""); err != nil {
		f.Fatal(err)
	}
	s.Check("docs", s.f.Servers["docs"].Approved, []catalog.Entry{tool("docs", "search", "Search\u00e9 <b>")})
	full, err := Encode(s.File())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"", "{}", "[]", "null", "{", `{"revision": 1}`, `{"servers": null}`, `{} x`, `{}}`, "\uFEFF{}",
		`{"revision": 1, "revision": 2}`, `{"servers": {"": {}}}`, `{"revision": 1e3}`,
		`{"servers": {"a": {"key": "sha256:00", "approved": {"type": "stdio"}, "approvedAt": "2026-01-01T00:00:00Z"}}}`,
		string(full),
		strings.Replace(string(full), `"description": "Search`, `"description": "Search!`, 1),
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		f1, err := Decode(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || len(de.Problems) == 0 || f1 != nil {
				t.Fatalf("Decode(%q) = %v, %#v; want nil and a *DecodeError with problems", data, f1, err)
			}
			return
		}
		for name, rec := range f1.Servers {
			if rec.Key != rec.Approved.Key() {
				t.Fatalf("server %q: key does not match", name)
			}
			for tn, p := range rec.Tools {
				if p.Hash != p.Definition.Hash(tn) {
					t.Fatalf("tool %q: hash does not match", tn)
				}
			}
		}
		b, err := Encode(f1)
		if err != nil {
			t.Fatalf("Encode(Decode(%q)) = %v", data, err)
		}
		if got, err := encodeFile(f1); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("the store's encoding of %q differs from encoding/json's (%v):\n%s\nwant:\n%s", data, err, got, b)
		}
		f2, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%q))) = %v\n%s", data, err, b)
		}
		if !reflect.DeepEqual(f1, f2) {
			t.Fatalf("round trip of %q changed it:\n%+v\n%+v", data, f1, f2)
		}
	})
}
