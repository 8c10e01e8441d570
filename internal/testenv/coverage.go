package testenv

import (
	"flag"
	"os"
	"strings"
	"sync"
	"testing"
)

// The whole system's coverage: when the test binary writes coverage data
// (go test -cover … -args -test.gocoverdir=DIR), the binaries the tests run
// are built with -cover too and write theirs into the same DIR, so that
// `go tool covdata percent -i=DIR` counts the code only a daemon runs.
//
// The go command sets GOCOVERDIR for the test binary to a directory of its
// own, deleted when the package's tests end, not to -test.gocoverdir's: a
// child that inherited it would write where nobody reads. So the harness
// points GOCOVERDIR at the test binary's own directory before it runs
// anything it built.

var coverEnvOnce sync.Once

// coverDir is where this test binary writes its coverage data, or "" when
// it writes none.
func coverDir() string {
	if testing.CoverMode() == "" {
		return os.Getenv("GOCOVERDIR")
	}
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return os.Getenv("GOCOVERDIR")
}

// coverFlags are the build flags that make a binary count into coverDir,
// in the test binary's own counter mode (counters of one package in two
// modes cannot be merged), and point every child at that directory.
func coverFlags() []string {
	dir := coverDir()
	if dir == "" {
		return nil
	}
	coverEnvOnce.Do(func() { os.Setenv("GOCOVERDIR", dir) })
	mode := testing.CoverMode()
	if mode == "" {
		mode = "atomic"
	}
	return []string{"-cover", "-covermode=" + mode, "-coverpkg=" + strings.TrimSuffix(Module, "/") + "/..."}
}
