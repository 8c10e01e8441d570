package pins

import (
	"bytes"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// TestEncodeFile: the pins as the store writes them are encoding/json's
// (Encode, the reference), byte for byte, through changes of one server,
// new servers, and removed ones.
func TestEncodeFile(t *testing.T) {
	s := open(t, t.TempDir(), map[string]config.Server{"docs": stdio("docs-mcp"), "a<b>&\u00e9\"": stdio("odd")})
	check := func(what string) {
		t.Helper()
		f := s.File()
		want, err := Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the encoding differs from encoding/json's:\n%s\nwant:\n%s", what, got, want)
		}
	}
	check("first")
	s.Check("docs", TrustOf(stdio("docs-mcp")), []catalog.Entry{tool("docs", "a", "A <b>."), tool("docs", "b", "B.")})
	check("one server's tools")
	s.Check("a<b>&\u00e9\"", TrustOf(stdio("odd")), []catalog.Entry{tool("a<b>&\u00e9\"", "x", "X.")})
	check("the other's")
	if _, err := s.Approve("web", TrustOf(stdio("web-mcp")), ""); err != nil {
		t.Fatal(err)
	}
	check("a new server")
	if _, err := s.Forget("docs"); err != nil {
		t.Fatal(err)
	}
	check("a server removed")
	if _, err := s.Forget("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget("a<b>&\u00e9\""); err != nil {
		t.Fatal(err)
	}
	check("no servers")
}
