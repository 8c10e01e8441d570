package daemon

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxLogBytes is the size at which logs.jsonl is rotated when the daemon
// starts; one previous file (logs.jsonl.1) is kept.
const maxLogBytes = 10 << 20

// openLog opens $PLEXUS_HOME/logs.jsonl for appending, rotating it first if
// it has grown too large.
func openLog(home string) (*os.File, error) {
	p := filepath.Join(home, "logs.jsonl")
	if fi, err := os.Stat(p); err == nil && fi.Size() > maxLogBytes {
		if err := os.Rename(p, p+".1"); err != nil {
			return nil, fmt.Errorf("rotating %s: %w", p, err)
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	return f, nil
}
