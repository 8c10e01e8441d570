package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// maxLogBytes is the size at which logs.jsonl is rotated; one previous
// file (logs.jsonl.1) is kept, so the logs never take more than twice this.
const maxLogBytes = 10 << 20

// logFile is $PLEXUS_HOME/logs.jsonl, rotated by size as it is written.
type logFile struct {
	path string

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

// openLog opens $PLEXUS_HOME/logs.jsonl for appending (0600).
func openLog(home string) (*logFile, error) {
	l := &logFile{path: filepath.Join(home, "logs.jsonl")}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *logFile) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends one record, rotating first if the file is full. A record
// is never split across files.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size > 0 && l.size+int64(len(p)) > maxLogBytes {
		l.f.Close()
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return 0, err
		}
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// Close closes the file.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
