package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The binaries the tests run are built into .cache/bin under the
// repository, one directory per build key: the hash of the module's Go
// sources, go.mod, go.sum and the build flags. Every test package of one
// `go test` run (and every later run on unchanged sources) shares them, and
// nothing is left in the temp dir.

var (
	buildsMu sync.Mutex
	builds   = map[string]buildResult{}
)

type buildResult struct {
	path string
	err  error
}

// buildFlags are the flags the test binary's own build asks for: -race when
// it is race-built, so that the race detector sees the daemon too, and
// -cover when the tests write coverage data, so that one run measures the
// coverage of the whole system (coverage.go).
func buildFlags() []string {
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	return append(flags, coverFlags()...)
}

var raceExitOnce sync.Once

// raceExitAtOnce lets the race-built binaries exit at once. The race
// detector makes every race-built process sleep a second before it exits
// (GORACE's atexit_sleep_ms, 1000 by default), a grace for other threads to
// run into a race. The tests run the binaries they build hundreds of times
// (each `plexus add` and `plexus call`, each daemon), so that second was
// most of the race run's time: TestQuickstart took 15 s, nearly all of it
// asleep. A report already under way is still printed in full (the
// detector waits for it at exit). The variable is set for the processes
// the tests start, here, where the first race-built binary is asked for,
// and not at the test binary's start: some tests run the test binary
// itself as a server and check its environment. GORACE set by the caller
// wins.
func raceExitAtOnce() {
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
}

// BuildCommand builds the main package pkg (an import path relative to the
// repository, e.g. "./cmd/plexus") with the test run's build flags, once per
// source state, and returns the binary's path.
func BuildCommand(t testing.TB, pkg string) string {
	t.Helper()
	buildsMu.Lock()
	defer buildsMu.Unlock()
	r, ok := builds[pkg]
	if !ok {
		if raceEnabled {
			raceExitOnce.Do(raceExitAtOnce)
		}
		r.path, r.err = buildCached(pkg, buildFlags())
		builds[pkg] = r
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
}

func buildCached(pkg string, flags []string) (string, error) {
	root := RepoRoot()
	key, err := sourceKey(root, pkg, flags)
	if err != nil {
		return "", fmt.Errorf("hashing the sources: %w", err)
	}
	cache := filepath.Join(root, ".cache", "bin")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(cache, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	dir := filepath.Join(cache, key)
	bin := filepath.Join(dir, filepath.Base(pkg))
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		os.Chtimes(dir, now, now)
		return bin, nil
	}
	pruneBuilds(cache, time.Hour)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	args := append([]string{"build", "-o", tmp}, flags...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", errors.New("go build " + pkg + ": " + err.Error() + "\n" + string(out))
	}
	return bin, os.Rename(tmp, bin)
}

// pruneBuilds removes the builds not used for longer than age: older
// sources, or other flags.
func pruneBuilds(cache string, age time.Duration) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && e.IsDir() && time.Since(info.ModTime()) > age {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}

// sourceKey hashes what a build of pkg can depend on in this module: every
// file but tests, hidden folders and build outputs (Go files, go.mod and
// go.sum, and the files the web page embeds; the module is small, so all
// of it is hashed rather than pkg's dependencies worked out), and the flags.
func sourceKey(root, pkg string, flags []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", pkg, strings.Join(flags, " "))
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" && filepath.Dir(p) == root || name == "perf-out") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(name, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Race reports whether the tests and the binaries they run are race-built:
// the detector multiplies memory and slows every step, which bounds that
// hold a daemon to its budget allow for.
func Race() bool { return raceEnabled }

// RaceOr returns plain in a plain run and race in a race run: a bound that
// holds a plain run and allows for the detector in the other. The reason
// for each pair is written beside its use.
func RaceOr[T any](plain, race T) T {
	if raceEnabled {
		return race
	}
	return plain
}
