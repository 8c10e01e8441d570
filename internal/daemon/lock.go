package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/plexus-mcp/plexus/internal/catcache"
	"github.com/plexus-mcp/plexus/internal/docstore"
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

// removeStrays removes what saves that were killed mid-way left in the
// home: the temporary files of its documents (the OAuth tokens' among
// them, which would otherwise outlive a logout), of its token and of the
// catalog cache. Only
// the holder of the lock may, and before anything of its own saves: a
// save in progress has a temporary file of the same name.
func removeStrays(home string, log *slog.Logger) error {
	removed, err := docstore.RemoveStrays(home, append(slices.Clone(Documents), TokenName, catcache.FileName)...)
	if len(removed) > 0 {
		log.Warn("removed the temporary files of saves that were interrupted", "files", removed)
	}
	if err != nil {
		return fmt.Errorf("removing the temporary files of interrupted saves in %s: %w", home, err)
	}
	return nil
}
