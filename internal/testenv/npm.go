package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

var npmOnce sync.Once
var npmErr error

// NPMBin returns the path of an executable installed by the npm packages in
// testenv/npm (package.json and package-lock.json pin their versions), and
// installs them first with `npm ci` if needed. Tests of every package share
// one install under .cache/npm, guarded by a file lock.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed for the tests against real MCP servers: install Node.js (≥ 20) and npm")
	}
	root := RepoRoot()
	prefix := filepath.Join(root, ".cache", "npm")
	npmOnce.Do(func() { npmErr = npmInstall(filepath.Join(root, "internal", "testenv", "npm"), prefix) })
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	p := filepath.Join(prefix, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed under %s: %v", name, prefix, err)
	}
	return p
}

var (
	npmDirsMu sync.Mutex
	npmDirs   = map[string]error{}
)

// NPMInstall installs the npm packages pinned by package.json and
// package-lock.json in src (a directory under the repository) with `npm ci`,
// into .cache/npm-NAME, once per test process and only when the pins
// changed, and returns the node_modules directory.
func NPMInstall(t testing.TB, src, name string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed for this test: install Node.js (≥ 20) and npm")
	}
	prefix := filepath.Join(RepoRoot(), ".cache", "npm-"+name)
	npmDirsMu.Lock()
	err, done := npmDirs[prefix]
	if !done {
		err = npmInstall(src, prefix)
		npmDirs[prefix] = err
	}
	npmDirsMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(prefix, "node_modules")
}

func npmInstall(src, prefix string) error {
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(prefix, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	want, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return err
	}
	// Reinstall only when the pinned versions changed.
	if have, err := os.ReadFile(filepath.Join(prefix, "package-lock.json")); err == nil && string(have) == string(want) {
		if _, err := os.Stat(filepath.Join(prefix, "node_modules")); err == nil {
			return nil
		}
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(prefix, f), b, 0o644); err != nil {
			return err
		}
	}
	// An .npmrc beside them (ignore-scripts, say) goes along.
	if b, err := os.ReadFile(filepath.Join(src, ".npmrc")); err == nil {
		if err := os.WriteFile(filepath.Join(prefix, ".npmrc"), b, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = prefix
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &installError{string(out), err}
	}
	return nil
}

type installError struct {
	out string
	err error
}

func (e *installError) Error() string { return "npm ci: " + e.err.Error() + "\n" + e.out }

// NPMProject makes dir the npm project of the servers testenv installs
// (package.json and a link to .cache/npm's node_modules), installing them
// first if needed: `npx -y PACKAGE@VERSION` run in dir or below — a
// daemon's home inside it — then takes the installed package of that
// version, without the network (npm's own rule for a project's
// dependencies).
func NPMProject(t testing.TB, dir string) {
	t.Helper()
	NPMBin(t, "mcp-server-memory")
	cache := filepath.Join(RepoRoot(), ".cache", "npm")
	if err := os.Symlink(filepath.Join(cache, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cache, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var npmScriptsMu sync.Mutex

// npmScripts installs the npm project internal/testenv/NAME (npm ci, once)
// and copies its scripts matching pattern beside the installed
// node_modules, so that their imports resolve there; a script already
// there unchanged is left alone. It returns the directory they run from.
func npmScripts(t testing.TB, name, pattern string) string {
	t.Helper()
	src := filepath.Join(RepoRoot(), "internal", "testenv", name)
	dir := filepath.Dir(NPMInstall(t, src, name))
	npmScriptsMu.Lock()
	defer npmScriptsMu.Unlock()
	files, err := filepath.Glob(filepath.Join(src, pattern))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, b) {
			continue
		}
		tmp := dst + ".tmp" + strconv.Itoa(os.Getpid())
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
