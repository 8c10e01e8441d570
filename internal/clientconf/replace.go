package clientconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// errNoSwap says the system or file system cannot exchange two names in
// one step (exchange_*.go): replace then compares and renames.
var errNoSwap = errors.New("no atomic exchange here")

// replace puts data at path, as a new file of mode perm, durably. It
// returns nil once it replaced base (the text the edit was made of; for a
// file that did not exist, nothing), or what it found at path instead: a
// client wrote meanwhile, and the edit is to be made again of that.
//
// Where the system can (Linux's renameat2), the new file and the old
// exchange names in one step, and the old one is then read back: nothing
// a client wrote before that step is lost, even if it wrote a moment
// before. Elsewhere the file is read and compared just before the rename.
func replace(path string, data []byte, perm fs.FileMode, exists bool, base []byte) (*current, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, atomicfile.TempPattern(filepath.Base(path)))
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after an exchange it holds the old text
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}

	if !exists {
		switch err := createNew(tmp, path); {
		case err == nil:
			return nil, syncDir(dir)
		case errors.Is(err, fs.ErrExist):
			return reread(path) // the client made it meanwhile
		case !errors.Is(err, errNoSwap):
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		if _, err := os.Lstat(path); err == nil {
			return reread(path)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		return nil, syncDir(dir)
	}

	// The new text is on disk: compare just before the swap, so that the
	// file shows no stale text unless the client writes in these few
	// microseconds — and then the swap hands its text back at once.
	cur, err := readPlain(path)
	if err != nil {
		return nil, err
	}
	if !cur.exists || !bytes.Equal(cur.data, base) {
		return &cur, nil
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(now, cur.info) {
		return reread(path) // replaced while it was being read
	}
	if swapWindow != nil {
		swapWindow()
		defer swapWindow()
	}
	switch err := exchange(tmp, path); {
	case err == nil:
		// The file compared is what the swap took away (the same inode),
		// unless the client renamed a new one in between.
		if old, err := os.Lstat(tmp); err == nil && os.SameFile(old, cur.info) {
			return nil, syncDir(dir)
		}
		// The client wrote in that moment: its text goes back at once,
		// before it can read ours (made of its older text) and build on
		// it; then the edit is made again. A client that reads the file
		// in the microseconds between the two swaps reads our text, and
		// what it writes from it lacks its own newer text: POSIX has no
		// compare-and-swap of a file's contents to close that moment.
		return swapBack(tmp, path, data, perm)
	case errors.Is(err, fs.ErrNotExist):
		return reread(path) // the client removed it meanwhile
	case !errors.Is(err, errNoSwap):
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return nil, syncDir(dir)
}

// swapWindow, if set (by tests), is called when replace opens the moment
// in which the file may show a text older than a client's newest — its
// exchange — and again when that moment is over.
var swapWindow func()

func reread(path string) (*current, error) {
	cur, err := readPlain(path)
	if err != nil {
		return nil, err
	}
	return &cur, nil
}

// swapBack undoes an exchange that put data over a client's newer text,
// which is at tmp: it exchanges the two again and returns the client's
// text. Should the client have written once more between the two swaps
// (over ours), that newest text is what came to tmp: it goes back instead.
func swapBack(tmp, path string, data []byte, perm fs.FileMode) (*current, error) {
	if err := exchange(tmp, path); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if back, err := readPlain(tmp); err == nil && !bytes.Equal(back.data, data) {
		if err := exchange(tmp, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	cur, err := readPlain(path)
	if err != nil {
		return nil, err
	}
	cur.mode = perm
	return &cur, nil
}
