package testenv

import (
	"os"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs of size (as mount(8) takes it, "256k") on dir
// for the test, mode 0700, and unmounts it at cleanup: a disk that fills up
// on purpose. The test is skipped, saying why, unless it runs as root on a
// system that lets it mount one.
func MountTmpfs(t testing.TB, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): the test needs one", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
}
