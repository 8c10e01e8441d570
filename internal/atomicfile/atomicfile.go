// Package atomicfile writes files so that a crash at any instant leaves either
// the old or the new content on disk, never a torn file (R-OWN-3).
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically with the given permissions: it
// writes a temporary file in the same directory, fsyncs it, renames it over
// path, and fsyncs the directory so that the rename itself is durable.
//
// On any error the original file is untouched and the temporary file removed.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600; set the wanted mode before any data
	// lands so that a secret file is never briefly more open than asked.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("atomic write of %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	return syncDir(dir)
}

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
