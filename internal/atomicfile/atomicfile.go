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
// path, and makes the rename itself durable (replace_*.go: rename(2) and an
// fsync of the directory on unix, MoveFileEx with write-through on
// Windows).
//
// On any error the original file is untouched and the temporary file removed.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPattern(filepath.Base(path)))
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
	step("created")
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	step("written")
	if err := f.Sync(); err != nil {
		return fmt.Errorf("atomic write of %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	step("synced")
	if err := replace(tmp, path); err != nil {
		return fmt.Errorf("atomic write of %s: %w", path, err)
	}
	step("renamed")
	return syncDir(dir)
}

// TempPattern is the os.CreateTemp pattern of name's temporary files, so
// that strays left by a crash can be found and removed.
func TempPattern(name string) string { return "." + name + ".tmp-*" }

// RemoveStrays deletes temporary files a crash left next to name in dir;
// call it before the first write after a start.
func RemoveStrays(dir, name string) error {
	strays, err := filepath.Glob(filepath.Join(dir, TempPattern(name)))
	if err != nil {
		return err
	}
	for _, p := range strays {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// testHook, set only by tests, runs between the steps of a write so that a
// test can crash the process at each of them.
var testHook func(step string)

func step(name string) {
	if testHook != nil {
		testHook(name)
	}
}
