package docstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/docstore"
)

// TestFilesKeepRevisions: a write that keeps replaces the file and keeps
// the version it replaced, the newest MaxRevisions of them.
func TestFilesKeepRevisions(t *testing.T) {
	f, err := docstore.OpenFiles(t.TempDir(), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Read("a.json")
	for i := range docstore.MaxRevisions + 3 {
		if d, err = f.Write("a.json", d, fmt.Appendf(nil, "v%d", i), true); err != nil {
			t.Fatal(err)
		}
	}
	revs, err := f.Revisions("a.json")
	if err != nil || len(revs) != docstore.MaxRevisions {
		t.Fatalf("%d revisions kept (%v), want %d", len(revs), err, docstore.MaxRevisions)
	}
	newest, err := f.RevisionData("a.json", revs[0].Name)
	if err != nil || string(newest) != fmt.Sprintf("v%d", docstore.MaxRevisions+1) {
		t.Fatalf("newest kept = %q, %v", newest, err)
	}
	if _, err := f.RevisionData("a.json", "a.json.nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an unknown revision: %v", err)
	}
	if other, _ := f.Revisions("b.json"); len(other) != 0 {
		t.Fatalf("another document lists %d revisions", len(other))
	}
}

// TestCopy: every document and kept version is copied and read back; a
// target that holds any of them is refused unless overwrite.
func TestCopy(t *testing.T) {
	from, _ := docstore.OpenFiles(t.TempDir())
	to, _ := docstore.OpenFiles(t.TempDir())
	d, _ := from.Write("a.json", docstore.Doc{}, []byte("a1"), true)
	from.Write("a.json", d, []byte("a2"), true)
	from.Write("b.json", docstore.Doc{}, []byte("b1"), false)
	names := []string{"a.json", "b.json", "missing.json"}
	c, err := docstore.Copy(from, to, names, false)
	if err != nil || len(c.Docs) != 2 || c.Revisions != 1 {
		t.Fatalf("copy = %+v, %v", c, err)
	}
	for _, n := range []string{"a.json", "b.json"} {
		a, _ := from.Read(n)
		b, _ := to.Read(n)
		if !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("%s: %q copied as %q", n, a.Data, b.Data)
		}
	}
	if revs, _ := to.Revisions("a.json"); len(revs) != 1 {
		t.Fatalf("%d revisions copied", len(revs))
	}
	if _, err := docstore.Copy(from, to, names, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a copy over a full target: %v", err)
	}
	if _, err := docstore.Copy(from, to, names, true); err != nil {
		t.Fatalf("a forced copy: %v", err)
	}
}

// TestDigest: a Doc kept by its digest compares as the document it stands
// for, and holds none of its bytes.
func TestDigest(t *testing.T) {
	type Doc = docstore.Doc
	d := Doc{Exists: true, Data: []byte(`{"servers": {}}`), Gen: 3}
	g := d.Digest()
	if g.Data != nil {
		t.Error("the digest keeps the content")
	}
	if !g.Same(d) || !d.Same(g) || !g.Same(g) {
		t.Error("a digest is not the same as its document")
	}
	other := Doc{Exists: true, Data: []byte(`{"servers": {"a": {}}}`), Gen: 3}
	if g.Same(other) || other.Same(g) || g.Same(other.Digest()) {
		t.Error("a digest is the same as another document")
	}
	if g.Same(Doc{Exists: true, Data: d.Data, Gen: 4}) {
		t.Error("a digest is the same at another generation")
	}
	f := docstore.Files{Home: t.TempDir()}
	if _, err := f.Write("x.json", g, []byte("{}"), true); err == nil {
		t.Error("a write that keeps the version it replaces took a digest for it")
	}
}
