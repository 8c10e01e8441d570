package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongSocketPathSaysWhy: a home whose socket path is past what a unix
// socket takes fails to start with the reason and the way out, not with
// the system's bare "invalid argument".
func TestLongSocketPathSaysWhy(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 130 {
		dir = filepath.Join(dir, "a-long-folder-name")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := listenSocket(filepath.Join(dir, SocketName))
	if err == nil {
		ln.Close()
		t.Fatal("listened on a socket path of more than 130 bytes")
	}
	if !strings.Contains(err.Error(), "choose a shorter PLEXUS_HOME") {
		t.Fatalf("the error does not say why: %v", err)
	}

	// A short path still listens.
	ln, err = listenSocket(filepath.Join(t.TempDir(), SocketName))
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
