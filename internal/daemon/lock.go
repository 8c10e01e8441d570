package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// homeLock makes sure one daemon owns a home directory.
type homeLock struct{ f *os.File }

func acquireLock(home string) (*homeLock, error) {
	p := filepath.Join(home, "daemon.lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", p, err)
	}
	if err := lockFile(f); err != nil {
		b, _ := os.ReadFile(p)
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("a plexus daemon is already running for %s (pid %s): use it, or stop it first", home, pid)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &homeLock{f}, nil
}

func (l *homeLock) release() {
	unlockFile(l.f)
	l.f.Close()
}
