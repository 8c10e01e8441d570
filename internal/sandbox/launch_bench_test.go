//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMain lets this test binary be the launcher, as the plexus binary is:
// run with Command first, it is Main.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// BenchmarkLaunch is what the sandbox adds to a server's start, without the
// daemon around it: /bin/true started plainly, and started the way a
// sandboxed server is (new namespaces, this binary as the launcher, its
// mounts, Landlock and seccomp, then the exec), with network none (a
// network namespace of its own) and all (none). The ratio of
// the two is the sandbox's cost; on a shared machine only it holds.
func BenchmarkLaunch(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	if m := (&Policy{Network: Network{Mode: NetworkNone}}).Missing(Detect()); len(m) > 0 {
		b.Skip(m)
	}
	dir := b.TempDir()
	p := &Policy{
		Private: filepath.Join(dir, "private"),
		Hidden:  []string{filepath.Join(dir, "plexus")},
		Network: Network{Mode: NetworkNone},
	}
	for _, d := range []string{p.Private, p.Hidden[0]} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, network := range []string{NetworkNone, NetworkAll} {
		b.Run("sandboxed-"+network, func(b *testing.B) {
			p := *p
			p.Network.Mode = network
			args, err := LauncherArgs(&p, self, "/bin/true", nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = p.Private
				cmd.SysProcAttr = &syscall.SysProcAttr{}
				Isolate(cmd.SysProcAttr, &p)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}
