package pins

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// passedOn is an entry as catalog builds it from a server's definition,
// which Plexus passes on as written (Raw).
func passedOn(t *testing.T, server, raw string) catalog.Entry {
	t.Helper()
	b, warnings, err := catalog.Build(server, catalog.Lists{Tools: []json.RawMessage{json.RawMessage(raw)}}, catalog.Filter{}, catalog.Limits{})
	if err != nil || len(warnings) > 0 || len(b.Entries) != 1 {
		t.Fatalf("Build(%s): %v %q %d", raw, err, warnings, len(b.Entries))
	}
	return b.Entries[0]
}

const (
	viewTool      = `{"name":"show","description":"Shows.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"x-new":1},"_meta":{"ui":{"resourceUri":"ui://a/v.html"}}}`
	viewToolMoved = `{"name":"show","description":"Shows.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"x-new":1},"_meta":{"ui":{"resourceUri":"ui://evil/v.html"}}}`
	viewToolHint  = `{"name":"show","description":"Shows.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"x-new":2},"_meta":{"ui":{"resourceUri":"ui://a/v.html"}}}`
)

// TestExtraIsPinned: what Plexus passes on beside the fields it models —
// a tool's _meta (its MCP Apps view), an annotation of a newer spec — is
// pinned with the rest: a change holds the tool back like a changed
// description (R-CAT-6).
func TestExtraIsPinned(t *testing.T) {
	s := open(t, t.TempDir(), map[string]config.Server{"docs": stdio("docs-mcp")})
	tr := TrustOf(stdio("docs-mcp"))
	if d := s.Check("docs", tr, []catalog.Entry{passedOn(t, "docs", viewTool)}); len(d.Offered) != 1 {
		t.Fatalf("first sight: %+v", d)
	}
	pin := s.File().Servers["docs"].Tools["show"]
	if want := `{"_meta":{"ui":{"resourceUri":"ui://a/v.html"}},"annotations":{"x-new":1}}`; string(pin.Extra) != want {
		t.Errorf("pinned extra = %s, want %s", pin.Extra, want)
	}
	for _, changed := range []string{viewToolMoved, viewToolHint} {
		d := s.Check("docs", tr, []catalog.Entry{passedOn(t, "docs", changed)})
		if len(d.Held) != 1 || !slices.Equal(d.Held[0].Changed, []string{FieldExtra}) ||
			!strings.Contains(d.Held[0].Reason, "other members") {
			t.Errorf("changed to %s: %+v", changed, d)
		}
	}
	// Key order and white space are no change.
	same := `{ "_meta" : {"ui":{"resourceUri":"ui://a/v.html"}}, "name":"show","description":"Shows.","inputSchema":{"type":"object"},"annotations":{"x-new":1,"readOnlyHint":true}}`
	if d := s.Check("docs", tr, []catalog.Entry{passedOn(t, "docs", same)}); len(d.Offered) != 1 {
		t.Errorf("the same definition written otherwise: %+v", d)
	}
	// The pins file keeps it, and reads it back.
	if _, err := Decode(mustRead(t, s.Path())); err != nil {
		t.Fatal(err)
	}
}

// TestPinsBeforeExtraAreBroughtUpToDate: a pin made before Plexus pinned
// Extra (no "extra" in pins.json) still matches its tool — nothing is held
// back after an upgrade — and is brought up to date, keeping when it was
// pinned; from then on a change of the rest holds the tool back.
func TestPinsBeforeExtraAreBroughtUpToDate(t *testing.T) {
	home := t.TempDir()
	e := passedOn(t, "docs", viewTool)
	old := DefinitionOf(e)
	old.Extra = nil // as a Plexus before pass-through pinned it
	tr := TrustOf(stdio("docs-mcp"))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := &File{Revision: 1, Servers: map[string]Server{"docs": {Key: tr.Key(), Approved: tr, ApprovedAt: at,
		Tools: map[string]Tool{"show": {Hash: old.Hash("show"), Definition: old, PinnedAt: at}}}}}
	data, err := encodeFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"extra"`) {
		t.Fatalf("a pin without extra is written with one:\n%s", data)
	}
	if err := os.WriteFile(filepath.Join(home, FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, home, nil)
	if d := s.Check("docs", tr, []catalog.Entry{e}); len(d.Offered) != 1 || len(d.Held) != 0 {
		t.Fatalf("after the upgrade: %+v", d)
	}
	pin := s.File().Servers["docs"].Tools["show"]
	if pin.Extra == nil || !pin.PinnedAt.Equal(at) {
		t.Errorf("the pin was not brought up to date keeping its time: extra %s, pinned at %v", pin.Extra, pin.PinnedAt)
	}
	if d := s.Check("docs", tr, []catalog.Entry{passedOn(t, "docs", viewToolMoved)}); len(d.Held) != 1 {
		t.Errorf("a changed view after the upgrade: %+v", d)
	}
	// A tool with nothing extra, pinned before, is offered as it was.
	plain := DefinitionOf(tool("docs", "plain", "Plain."))
	before := plain
	before.Extra = nil
	if string(plain.Extra) != "{}" || plain.Hash("plain") != before.Hash("plain") {
		t.Errorf("a definition with nothing extra (%s) hashes otherwise than before", plain.Extra)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
