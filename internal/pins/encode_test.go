package pins

import (
	"bytes"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// TestEncodeCached: the pins written with the records' encodings kept
// between saves are Encode's, byte for byte, through changes of one
// server, new servers, and removed ones.
func TestEncodeCached(t *testing.T) {
	s := open(t, t.TempDir(), map[string]config.Server{"docs": stdio("docs-mcp"), "a<b>&\u00e9\"": stdio("odd")})
	var c encodedRecords
	check := func(what string) {
		t.Helper()
		f := s.File()
		want, err := Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.encode(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: cached encoding differs:\n%s\nwant:\n%s", what, got, want)
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
	if _, ok := c["docs"]; ok {
		t.Error("the removed server's encoding is still kept")
	}
	if _, err := s.Forget("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget("a<b>&\u00e9\""); err != nil {
		t.Fatal(err)
	}
	check("no servers")
}
