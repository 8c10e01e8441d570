package atomicfile

import (
	"golang.org/x/sys/windows"
)

// replace moves tmp over path with MoveFileEx: REPLACE_EXISTING makes it a
// replace, WRITE_THROUGH returns only once the move is on disk (what the
// directory fsync does on unix). Never run: Windows is cross-compiled only.
func replace(tmp, path string) error {
	from, err := windows.UTF16PtrFromString(tmp)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	return windows.MoveFileEx(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
}

// syncDir: a directory cannot be flushed on Windows, and need not be,
// since replace wrote through.
func syncDir(string) error { return nil }
