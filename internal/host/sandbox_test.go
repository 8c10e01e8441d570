package host

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
)

// A sandboxed server's private folder is beside Plexus's home, never in
// it, and a working directory in Plexus's home is refused: from inside it,
// ../../plexus.sock reached the daemon.
func TestSandboxPolicyOutsidePlexusHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "plexus")
	p, err := sandboxPolicy("fs", *config.StrictSandbox(), home, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := home + "-sandbox/fs"; p.Private != want {
		t.Errorf("private folder %s, want %s", p.Private, want)
	}
	if inside(p.Private, home) {
		t.Errorf("the private folder %s is in Plexus's home", p.Private)
	}
	if p.Previous != filepath.Join(home, "sandbox", "fs") || p.Server != "fs" || p.Dir != "" {
		t.Errorf("previous %q, server %q, dir %q", p.Previous, p.Server, p.Dir)
	}
	if len(p.Hidden) != 1 || p.Hidden[0] != home {
		t.Errorf("hidden %q", p.Hidden)
	}
	for _, cwd := range []string{home, filepath.Join(home, "sandbox", "fs"), filepath.Dir(home)} {
		if _, err := sandboxPolicy("fs", *config.StrictSandbox(), home, cwd); err == nil || !strings.Contains(err.Error(), "would show Plexus's home") {
			t.Errorf("cwd %s: %v", cwd, err)
		}
	}
	other := filepath.Join(t.TempDir(), "work")
	p, err = sandboxPolicy("fs", *config.StrictSandbox(), home, other)
	if err != nil || p.Dir != other {
		t.Errorf("cwd %s: dir %q, %v", other, p.Dir, err)
	}
}
