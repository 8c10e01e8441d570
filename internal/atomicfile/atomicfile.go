// Package atomicfile writes files so that a crash at any instant leaves either
// the old or the new content on disk, never a torn file (R-OWN-3).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// IsTemp reports whether file (a base name) is a temporary file of a write
// of name exactly as WriteFile names them: the pattern's "*" is the digits
// os.CreateTemp puts there. A name a person gave a file of their own
// (".pins.json.tmp-mine") is not one.
func IsTemp(file, name string) bool {
	rest, ok := strings.CutPrefix(file, "."+name+".tmp-")
	if !ok || rest == "" || len(rest) > 20 {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// RemoveStrays deletes the temporary files that writes of names, killed
// before their rename, left in dir: regular files that IsTemp names, and
// nothing else (a link or a directory of such a name is not one WriteFile
// made). It returns the names it removed. Call it only while nothing can
// be writing names in dir — for the daemon's home, while holding its lock
// — or it would remove a write in progress.
func RemoveStrays(dir string, names ...string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !slices.ContainsFunc(names, func(n string) bool { return IsTemp(e.Name(), n) }) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// testHook, set only by tests, runs between the steps of a write so that a
// test can crash the process at each of them.
var testHook func(step string)

func step(name string) {
	if testHook != nil {
		testHook(name)
	}
}
