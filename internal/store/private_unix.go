//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// checkOwner refuses a home directory that belongs to another uid.
func checkOwner(home string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d): choose another PLEXUS_HOME", home, st.Uid, os.Getuid())
	}
	return nil
}

// makePrivate makes the home directory 0700 if it is more open.
func makePrivate(home string, fi os.FileInfo) error {
	if fi.Mode().Perm() == 0o700 {
		return nil
	}
	return os.Chmod(home, 0o700)
}
