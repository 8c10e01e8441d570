package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/sandbox"
)

// A private folder an earlier Plexus kept in its home moves beside it at
// the first start, with what the server kept there; one already beside it
// is left as it is.
func TestMoveOldPrivate(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "plexus", "sandbox", "mem")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "memory.json"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &sandbox.Policy{Private: filepath.Join(dir, "plexus-sandbox", "mem"), Previous: old}
	if err := os.MkdirAll(filepath.Dir(p.Private), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := moveOldPrivate(p); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(p.Private, "memory.json")); err != nil || string(b) != "kept" {
		t.Errorf("moved folder: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Dir(old)); !os.IsNotExist(err) {
		t.Errorf("the emptied sandbox folder in Plexus's home is still there: %v", err)
	}
	// Both there: nothing moves.
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := moveOldPrivate(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the old folder was touched although the new one exists: %v", err)
	}
}

// A sandbox this kernel cannot enforce stops the start; when it is a team
// replica's default, which no one asked for, the error says how to opt out.
func TestSandboxErrorDefault(t *testing.T) {
	own := (&SandboxError{Missing: []string{"no Landlock"}}).Error()
	def := (&SandboxError{Missing: []string{"no Landlock"}, Default: true}).Error()
	if !strings.Contains(own, "no Landlock") || strings.Contains(own, `"sandbox": false`) {
		t.Errorf("own sandbox: %s", own)
	}
	if !strings.Contains(def, "no Landlock") || !strings.Contains(def, `set "sandbox": false on a server you trust`) {
		t.Errorf("default sandbox: %s", def)
	}
}
