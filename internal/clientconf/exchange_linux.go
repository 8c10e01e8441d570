package clientconf

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange swaps the names tmp and path in one step (renameat2
// RENAME_EXCHANGE): path is then the new text, tmp the old.
func exchange(tmp, path string) error {
	return rename2(tmp, path, unix.RENAME_EXCHANGE)
}

// createNew renames tmp to path unless path exists (RENAME_NOREPLACE).
func createNew(tmp, path string) error {
	return rename2(tmp, path, unix.RENAME_NOREPLACE)
}

func rename2(from, to string, flags uint) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, flags)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return errNoSwap // an old kernel, or a file system without it
	}
	return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: err}
}
