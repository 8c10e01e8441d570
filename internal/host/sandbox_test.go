package host

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
)

// A sandboxed server's private folder is beside Plexus's home, never in
// it, and a working directory in Plexus's home is refused: from inside it,
// ../../plexus.sock reached the daemon.
func TestSandboxPolicyOutsidePlexusHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "plexus")
	p, err := sandboxPolicy("fs", *config.StrictSandbox(), home, "", nil)
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
		if _, err := sandboxPolicy("fs", *config.StrictSandbox(), home, cwd, nil); err == nil || !strings.Contains(err.Error(), "would show Plexus's home") {
			t.Errorf("cwd %s: %v", cwd, err)
		}
	}
	other := filepath.Join(t.TempDir(), "work")
	p, err = sandboxPolicy("fs", *config.StrictSandbox(), home, other, nil)
	if err != nil || p.Dir != other {
		t.Errorf("cwd %s: dir %q, %v", other, p.Dir, err)
	}
}

// On a team's replica (sandboxByDefault) a stdio server without a sandbox
// gets the strict one, marked as the default; its own sandbox stays its
// own; "sandbox": false and a URL server get none. A one-machine daemon
// sandboxes only what asks for it.
func TestSandboxByDefault(t *testing.T) {
	own := &config.Sandbox{Network: config.SandboxNetwork{Mode: config.SandboxNetworkAll}}
	for _, tc := range []struct {
		what        string
		sc          config.Server
		team        bool
		want        *config.Sandbox
		wantDefault bool
	}{
		{"team, none", config.Server{Type: config.TypeStdio, Command: "x"}, true, config.StrictSandbox(), true},
		{"team, its own", config.Server{Type: config.TypeStdio, Command: "x", Sandbox: own}, true, own, false},
		{"team, false", config.Server{Type: config.TypeStdio, Command: "x", Sandbox: &config.Sandbox{Off: true}}, true, nil, false},
		{"team, URL", config.Server{Type: config.TypeHTTP, URL: "http://x"}, true, nil, false},
		{"one machine, none", config.Server{Type: config.TypeStdio, Command: "x"}, false, nil, false},
		{"one machine, its own", config.Server{Type: config.TypeStdio, Command: "x", Sandbox: own}, false, own, false},
	} {
		sb, byDefault := sandboxOf(tc.sc, tc.team)
		if runtime.GOOS != "linux" && byDefault {
			t.Errorf("%s: a default sandbox off Linux", tc.what)
			continue
		}
		if runtime.GOOS != "linux" && tc.wantDefault {
			tc.want, tc.wantDefault = nil, false
		}
		if (sb == nil) != (tc.want == nil) || (sb != nil && sb.Summary() != tc.want.Summary()) || byDefault != tc.wantDefault {
			t.Errorf("%s: sandbox %+v (default %v), want %+v (default %v)", tc.what, sb, byDefault, tc.want, tc.wantDefault)
		}
	}
}

// A replica's secret files go into the policy, and a folder listed for
// the server that is one of them, or in one, is refused: the cover would
// otherwise be a rule's silent exception.
func TestSandboxPolicySecrets(t *testing.T) {
	home := filepath.Join(t.TempDir(), "plexus")
	secrets := []string{"/etc/plexus/store.key", "/etc/plexus-url"}
	p, err := sandboxPolicy("fs", *config.StrictSandbox(), home, "", secrets)
	if err != nil || !slices.Equal(p.Secrets, secrets) {
		t.Fatalf("secrets %q, %v", p.Secrets, err)
	}
	sb := config.StrictSandbox()
	sb.Filesystem.Read = []string{"/etc/plexus"}
	if _, err := sandboxPolicy("fs", *sb, home, "", secrets); err != nil {
		t.Errorf("the folder around a secret: %v", err)
	}
	for _, path := range []string{"/etc/plexus/store.key", "/etc/plexus-url"} {
		sb.Filesystem.Read = []string{path}
		if _, err := sandboxPolicy("fs", *sb, home, "", secrets); err == nil || !strings.Contains(err.Error(), "is a secret of the daemon's") {
			t.Errorf("read %s: %v", path, err)
		}
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
