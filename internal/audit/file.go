package audit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Defaults of the file's bounds: 10 MiB a file, 5 files (the live one and
// four rotated), so the log never takes more than 50 MiB.
const (
	DefaultMaxFileBytes = 10 << 20
	DefaultMaxFiles     = 5
)

// file is the audit log on disk: path, and path.1 … path.(max-1), oldest
// last. Only the writer goroutine uses it.
type file struct {
	path     string
	maxBytes int64
	maxFiles int

	f    *os.File
	size int64
}

// openFile is the file at path within its bounds, opened now if now (else
// by its first write).
func openFile(path string, maxBytes int64, maxFiles int, now bool) (*file, error) {
	fl := &file{path: path}
	fl.bound(maxBytes, maxFiles)
	if now {
		if err := fl.open(); err != nil {
			return nil, err
		}
	}
	return fl, nil
}

// bound sets the file's bounds (0: the default); the next write keeps
// them.
func (fl *file) bound(maxBytes int64, maxFiles int) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	fl.maxBytes, fl.maxFiles = maxBytes, maxFiles
}

func (fl *file) open() error {
	f, err := os.OpenFile(fl.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	// A file made by an older daemon or by hand is made private too.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("opening the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the audit log: %w", err)
	}
	fl.f, fl.size = f, fi.Size()
	return nil
}

// write appends whole lines, rotating when the next would pass the bound:
// a line is never split across files, and a batch is split between files
// at its lines. A failed write (a full disk) is truncated away, so that
// the file holds no torn line.
func (fl *file) write(lines []byte) error {
	for len(lines) > 0 {
		if fl.f == nil {
			if err := fl.open(); err != nil {
				return err
			}
		}
		n := fl.fits(lines)
		if n == 0 {
			if err := fl.rotate(); err != nil {
				return err
			}
			n = max(fl.fits(lines), firstLine(lines)) // a line larger than a file goes alone
		}
		if err := fl.append(lines[:n]); err != nil {
			return err
		}
		lines = lines[n:]
	}
	return nil
}

// fits is how many bytes of whole lines of b the live file takes.
func (fl *file) fits(b []byte) int {
	room := fl.maxBytes - fl.size
	if int64(len(b)) <= room {
		return len(b)
	}
	if room <= 0 {
		return 0
	}
	cut := bytes.LastIndexByte(b[:room], '\n')
	return cut + 1
}

func firstLine(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return len(b)
}

func (fl *file) append(b []byte) error {
	n, err := fl.f.Write(b)
	if err != nil {
		if n > 0 {
			fl.f.Truncate(fl.size)
		}
		return fmt.Errorf("writing the audit log: %w", err)
	}
	fl.size += int64(n)
	return nil
}

// rotate shifts path.i to path.(i+1), dropping the oldest, and starts a
// new path.
func (fl *file) rotate() error {
	fl.f.Close()
	fl.f = nil
	os.Remove(fl.name(fl.maxFiles - 1))
	for i := fl.maxFiles - 2; i >= 0; i-- {
		if err := os.Rename(fl.name(i), fl.name(i+1)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("rotating the audit log: %w", err)
		}
	}
	return fl.open()
}

// name is the i-th file: 0 the live one.
func (fl *file) name(i int) string { return fileName(fl.path, i) }

func fileName(path string, i int) string {
	if i == 0 {
		return path
	}
	return path + "." + strconv.Itoa(i)
}

func (fl *file) close() error {
	if fl.f == nil {
		return nil
	}
	return fl.f.Close()
}
