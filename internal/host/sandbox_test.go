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

// Off Linux, adding a sandboxed server is refused at once, with the reason
// and what to do; a server without a sandbox, and any server on Linux, is
// not.
func TestSandboxRefusalOffLinux(t *testing.T) {
	sandboxed := config.Server{Type: config.TypeStdio, Command: "npx", Sandbox: config.StrictSandbox()}
	plain := config.Server{Type: config.TypeStdio, Command: "npx"}
	for _, goos := range []string{"darwin", "windows", "freebsd"} {
		err := sandboxRefusal(goos, "fs", sandboxed)
		if err == nil || !strings.Contains(err.Error(), "mcp.servers.fs.sandbox") || !strings.Contains(err.Error(), "only on Linux") ||
			!strings.Contains(err.Error(), "on "+goos) || !strings.Contains(err.Error(), "without --sandbox") {
			t.Errorf("%s: %v", goos, err)
		}
		if err := sandboxRefusal(goos, "fs", plain); err != nil {
			t.Errorf("%s, no sandbox: %v", goos, err)
		}
	}
	if err := sandboxRefusal("linux", "fs", sandboxed); err != nil {
		t.Errorf("linux: %v", err)
	}
}
