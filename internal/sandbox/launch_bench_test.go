//go:build linux

package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
// daemon around it: /bin/echo started plainly, and started the way a
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
		launch(b, func() *exec.Cmd { return exec.Command("/bin/echo", "up") })
	})
	for _, network := range []string{NetworkNone, NetworkAll} {
		b.Run("sandboxed-"+network, func(b *testing.B) {
			p := *p
			p.Network.Mode = network
			args, err := LauncherArgs(&p, self, "/bin/echo", []string{"up"})
			if err != nil {
				b.Fatal(err)
			}
			launch(b, func() *exec.Cmd {
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = p.Private
				cmd.SysProcAttr = &syscall.SysProcAttr{}
				Isolate(cmd.SysProcAttr, &p)
				return cmd
			})
		})
	}
}

// launch starts the command cmd makes, once per iteration, and reports besides
// the whole run (ns/op, the namespaces' teardown included) the time until
// the program printed its first byte (ms/up: what a server's start waits
// for).
func launch(b *testing.B, cmd func() *exec.Cmd) {
	var up time.Duration
	for b.Loop() {
		c := cmd()
		out, err := c.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		var stderr bytes.Buffer
		c.Stderr = &stderr
		start := time.Now()
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := out.Read(make([]byte, 1)); err != nil {
			c.Wait()
			b.Fatalf("no output: %v: %s", err, stderr.String())
		}
		up += time.Since(start)
		io.Copy(io.Discard, out)
		if err := c.Wait(); err != nil {
			b.Fatalf("%v: %s", err, stderr.String())
		}
	}
	b.ReportMetric(float64(up.Microseconds())/1000/float64(b.N), "ms/up")
}
