package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestHandEditIsNeverSavedOver guards the lost-update fault between a
// person editing extensions.json and the daemon: until the edit is
// applied with `plexus reload`, every write through the daemon (add,
// enable) is refused with the remedy and leaves the file exactly
// as edited — a whole new server, or a half-typed file. After a reload the
// writes go through; `plexus reload --discard` puts the file back and
// keeps the edit; every overwrite can be undone with `plexus revisions
// restore`.
func TestHandEditIsNeverSavedOver(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	writeSettings(t, e, 0, map[string]any{"one": map[string]any{"type": "stdio", "command": e.Bin, "args": []string{"example-server"}, "enabled": false}})
	e.StartDaemon()
	path := filepath.Join(e.Home, "extensions.json")
	read := func() []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string, want []byte, args ...string) {
		t.Helper()
		r := e.Run("", args...)
		if r.Code == 0 {
			t.Errorf("%s: plexus %s saved over the hand edit (exit 0)", what, strings.Join(args, " "))
		}
		mustContain(t, what, r.Stderr, "changed by hand")
		mustContain(t, what, r.Stderr, "plexus reload")
		if got := read(); !bytes.Equal(got, want) {
			t.Errorf("%s: plexus %s changed the edited file:\n%s\nwant:\n%s", what, strings.Join(args, " "), got, want)
		}
	}

	// A server added by hand, not yet applied.
	cfg := readSettings(t, e)
	cfg["mcp"].(map[string]any)["servers"].(map[string]any)["handmade"] = map[string]any{"type": "stdio", "command": e.Bin, "args": []string{"example-server"}}
	edited, _ := json.MarshalIndent(cfg, "", "  ")
	write(edited)
	refused("add after a hand edit", edited, "add", "two", "--no-verify", "--", e.Bin, "example-server")
	refused("enable after a hand edit", edited, "enable", "one")

	// A half-typed file is not overwritten either.
	half := edited[:len(edited)/2]
	write(half)
	refused("enable over a half-typed file", half, "enable", "one")
	r := e.Run("", "reload")
	if r.Code == 0 {
		t.Error("reload applied a half-typed file")
	}
	// The status says so at once, with the error reload gives (line and
	// column), without a reload.
	var st apitype.Status
	if err := json.Unmarshal([]byte(e.MustRun("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if f := st.SettingsFile; f == nil || len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "line ") ||
		!strings.Contains(r.Stderr, f.Problems[0]) {
		t.Errorf("status of a half-typed file: %+v; reload said %q", f, r.Stderr)
	}
	if got := read(); !bytes.Equal(got, half) {
		t.Error("a failed reload changed the half-typed file")
	}

	// Finished and applied: writes go through again, and keep the edit.
	write(edited)
	e.MustRun("reload")
	e.MustRun("add", "two", "--no-verify", "--", e.Bin, "example-server")
	after := readSettings(t, e)["mcp"].(map[string]any)["servers"].(map[string]any)
	for _, name := range []string{"one", "handmade", "two"} {
		if _, ok := after[name]; !ok {
			t.Errorf("server %s is missing after the edit was applied and a server added: %v", name, after)
		}
	}

	// Discarding an edit puts the file back and keeps the edit.
	before := read()
	write([]byte(`{"mcp": {"servers": {}}}`))
	out := e.MustRun("reload", "--discard")
	mustContain(t, "reload --discard", out, "discarded")
	if got := read(); !bytes.Equal(got, before) {
		t.Errorf("after --discard the file is\n%s\nwant\n%s", got, before)
	}
	e.MustRun("disable", "two")

	// Every overwrite can be undone: the version before `add two` is kept.
	var revs []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(e.MustRun("revisions", "--json")), &revs); err != nil {
		t.Fatal(err)
	}
	var beforeAdd string
	for _, r := range revs {
		b, err := os.ReadFile(filepath.Join(e.Home, "revisions", r.Name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(b, edited) {
			beforeAdd = r.Name
		}
	}
	if beforeAdd == "" {
		t.Fatalf("no kept revision holds the hand-edited file; kept: %v", revs)
	}
	e.MustRun("revisions", "restore", beforeAdd)
	restored := readSettings(t, e)["mcp"].(map[string]any)["servers"].(map[string]any)
	if _, ok := restored["handmade"]; !ok || len(restored) != 2 {
		t.Errorf("after restoring the version before `add two` the file holds %v, want one and handmade", restored)
	}
	if list := servers(t, e); list["handmade"].Name == "" || list["two"].Name != "" {
		t.Errorf("after restoring the version before `add two`: %v", list)
	}
	if r := e.Run("", "revisions", "restore", "nope"); r.Code == 0 || !strings.Contains(r.Stderr, "plexus revisions") {
		t.Errorf("restore of an unknown revision: exit %d, %s", r.Code, r.Stderr)
	}
}
