package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtCommand is one command of this module, built once per test process.
type builtCommand struct {
	pkg, name string // e.g. "./internal/testenv/faultserver", "faultserver"

	once sync.Once
	path string
	err  error
}

// get builds the command the first time and returns its path.
func (b *builtCommand) get(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "plexus-"+b.name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, b.name)
		cmd := exec.Command("go", "build", "-o", b.path, b.pkg)
		cmd.Dir = RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.err = errors.New("go build " + b.name + ": " + err.Error() + "\n" + string(out))
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}
