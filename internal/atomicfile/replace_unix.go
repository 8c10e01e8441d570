//go:build unix

package atomicfile

import (
	"fmt"
	"os"
)

// replace renames tmp over path: atomic on every unix file system.
func replace(tmp, path string) error { return os.Rename(tmp, path) }

// syncDir fsyncs dir, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
