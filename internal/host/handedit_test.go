package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
)

// TestHandEditShownAtOnce: a hand edit of extensions.json is in the status
// (SettingsFile) as soon as it is on disk, broken JSON with the line and
// column `plexus reload` gives, and Follow announces it, its fix and its
// discarding as they happen, without a reload.
func TestHandEditShownAtOnce(t *testing.T) {
	t.Parallel()
	th := newTestHost(t)
	th.create("ex", th.example(map[string]any{"enabled": false}))
	if f := th.SettingsFile(); f != nil {
		t.Fatalf("no hand edit yet: %+v", f)
	}
	ctx, cancel := context.WithCancel(t.Context())
	events, unsubscribe := th.Subscribe()
	defer unsubscribe()
	followed := make(chan error, 1)
	go func() { followed <- th.Follow(ctx) }()
	next := func(what string) *apitype.SettingsFile {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Type == apitype.EventSettingsFile {
					return ev.SettingsFile
				}
			case <-deadline:
				t.Fatalf("%s: no %s event within 30s", what, apitype.EventSettingsFile)
			}
		}
	}

	path := filepath.Join(th.st.Home(), store.ConfigFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(strings.Replace(string(good), "{", "{\n  \"oops\" 1,", 1))
	f := th.SettingsFile()
	if f == nil || f.Path != path || len(f.Problems) != 1 || !strings.Contains(f.Problems[0], "line 2, column 10") {
		t.Fatalf("status after a broken edit: %+v", f)
	}
	if ev := next("broken"); ev == nil || ev.Problems[0] != f.Problems[0] {
		t.Errorf("event of the broken edit: %+v", ev)
	}

	write(strings.Replace(string(good), "{", "{\n  \"mcp\": {\"retryMs\": -5},", 1))
	if ev := next("invalid"); ev == nil || len(ev.Problems) == 0 {
		t.Errorf("event of an edit that does not validate: %+v", ev)
	}

	write(string(good) + "\n")
	if ev := next("fixed"); ev == nil || len(ev.Problems) != 0 {
		t.Errorf("event of a fixed edit, not applied yet: %+v", ev)
	}
	if _, err := th.DiscardHandEdits(); err != nil {
		t.Fatal(err)
	}
	if ev := next("discarded"); ev != nil || th.SettingsFile() != nil {
		t.Errorf("after discarding: event %+v, status %+v", ev, th.SettingsFile())
	}
	cancel()
	if err := <-followed; err != nil {
		t.Errorf("Follow = %v", err)
	}
}

// TestHandEditStamp: the watch reads extensions.json again only when the
// file or the daemon's settings changed since its last look.
func TestHandEditStamp(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), store.ConfigFile)
	cfg, other := &config.File{}, &config.File{}
	missing := stampHandEdit(path, cfg)
	if (handEditStamp{}).same(missing) || missing.same(handEditStamp{}) {
		t.Error("the first look is the same as none")
	}
	if !missing.same(stampHandEdit(path, cfg)) {
		t.Error("a file still missing looks changed")
	}
	if err := os.WriteFile(path, []byte(`{"mcp":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	written := stampHandEdit(path, cfg)
	if written.same(missing) {
		t.Error("a file that appeared looks unchanged")
	}
	if !written.same(stampHandEdit(path, cfg)) {
		t.Error("an untouched file looks changed")
	}
	if written.same(stampHandEdit(path, other)) {
		t.Error("new settings (a save, a reload) look unchanged")
	}
	if err := os.WriteFile(path, []byte(`{"mcp":{"x":1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if written.same(stampHandEdit(path, cfg)) {
		t.Error("an edited file looks unchanged")
	}
}
