package e2e

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// treeSum is a digest of every name, mode, size and content under dir:
// what a program running from it would find.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", strings.TrimPrefix(p, dir), fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// npx under the sandbox works as a user expects, and writes nothing a
// program outside runs from (R-SBX-4). With network none it runs
// from the user's npm cache (an overlay: the user's cache read-only below,
// the server's own writes above it, in its private folder); with the
// registry on its list it fetches what the cache lacks through Plexus's
// proxy, into its own cache; and where it can do neither, the error names
// the flag that would let it. The user's ~/.npm is byte for byte what it
// was. The packages are tiny (is-number, is-odd) and npx runs the hostile
// server after installing them, so that the server can look at the cache
// it got.
func TestSandboxNPXCaches(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches from the npm registry")
	}
	t.Parallel()
	s := newSandboxEnv(t)
	npmEnv := append(os.Environ(), "HOME="+s.home, "npm_config_update_notifier=false")
	// The user ran is-number before: it is in their cache.
	seed := exec.Command("npm", "cache", "add", "is-number@7.0.0")
	seed.Env = npmEnv
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("npm cache add (outside the sandbox, to fill the user's cache): %v\n%s", err, out)
	}
	userCache := filepath.Join(s.home, ".npm")
	before := treeSum(t, userCache)
	hostile := testenv.HostileServer(t)
	s.StartDaemon()
	npx := func(pkg string) []string {
		return []string{"--allow-read", filepath.Dir(hostile), "--", "npx", "-y", "--package=" + pkg, "--", hostile}
	}

	// Network none: from the user's cache, offline.
	s.MustRun(append([]string{"add", "offline", "--sandbox"}, npx("is-number@7.0.0")...)...)
	tool := toolNamed(t, tools(t, s.Env), "offline", "attempt").Name
	cache := attempt(t, s.Env, tool, "env", "npm_config_cache")
	if want := "ok: " + filepath.Join(s.Home+"-sandbox", "offline", "cache", "npm"); cache != want {
		t.Errorf("npm's cache in the sandbox: %s, want %s", cache, want)
	}
	dir := strings.TrimPrefix(cache, "ok: ")
	// What npx installed is the server's to change, in its own cache.
	installed := attempt(t, s.Env, tool, "write", filepath.Join(dir, "poisoned.js"))
	if !strings.HasPrefix(installed, "ok:") {
		t.Errorf("writing into its own npm cache: %s", installed)
	}

	// A host list with the registry: what the cache lacks is fetched
	// through the proxy, into the server's own cache.
	s.MustRun(append([]string{"add", "fetch", "--sandbox", "--allow-net", "registry.npmjs.org:443"}, npx("is-odd@3.0.1")...)...)

	// Neither: the error says which flag would let it.
	r := s.Run("", append([]string{"add", "nonet", "--sandbox"}, npx("is-even@1.0.0")...)...)
	mustContain(t, "add without a network", r.Stderr, "give it `--allow-net registry.npmjs.org:443`")
	r = s.Run("", append([]string{"add", "elsewhere", "--sandbox", "--allow-net", "example.com:443"}, npx("is-even@1.0.0")...)...)
	mustContain(t, "add without the registry on the list", r.Stderr, "give it `--allow-net registry.npmjs.org:443`")
	mustContain(t, "add without the registry on the list", r.Stderr, "sandbox: denied connect to registry.npmjs.org:443")

	if after := treeSum(t, userCache); after != before {
		t.Errorf("the user's npm cache changed while sandboxed servers ran npx")
	}
	for _, name := range []string{"offline", "fetch"} {
		if _, err := os.Stat(filepath.Join(s.Home+"-sandbox", name, ".plexus-layers", "npm", "upper")); err != nil {
			t.Errorf("%s: its writes to the npm cache are not in its private folder: %v", name, err)
		}
	}
}

// A program a version manager installed under the home runs sandboxed
// without --allow-read: here a tool installed by an asdf-like manager,
// whose shim in ~/.asdf/shims runs the real program in ~/.asdf/installs.
// Before, the shim ran and the program it named was refused.
func TestSandboxVersionManagerUnderHome(t *testing.T) {
	t.Parallel()
	s := newSandboxEnv(t)
	hostile := testenv.HostileServer(t)
	installed := filepath.Join(s.home, ".asdf", "installs", "hostile", "1.0", "bin", "hostile")
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(hostile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installed, b, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(s.home, ".asdf", "shims", "hostile")
	if err := os.MkdirAll(filepath.Dir(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nexec \""+installed+"\" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := s.file(t, "home/.ssh/id_rsa", "CANARY-ASDF-61e0")
	s.StartDaemon()
	s.MustRun("add", "managed", "--sandbox", "--", shim)
	tool := toolNamed(t, tools(t, s.Env), "managed", "attempt").Name
	if got := attempt(t, s.Env, tool, "read", secret); !strings.HasPrefix(got, "refused:") {
		t.Errorf("the rest of the home: %s", got)
	}
}

// Python from pyenv under the home (this machine's python3) runs a
// sandboxed server with nothing but --sandbox. It needs the real home, where
// pyenv is, so the daemon keeps HOME; it skips where python3 is not a
// pyenv (or other) install under the home.
func TestSandboxPyenvPython(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	home, _ := os.UserHomeDir()
	py, err := exec.LookPath("python3")
	if err != nil || home == "" || !inFolder(py, home) {
		t.Skipf("python3 (%s) is not installed under the home (%s), as pyenv installs it", py, home)
	}
	e := testenv.New(t)
	script := filepath.Join(t.TempDir(), "server.py")
	if err := os.WriteFile(script, []byte(pythonServer), 0o755); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	e.MustRun("add", "py", "--sandbox", "--", script)
	tool := toolNamed(t, tools(t, e), "py", "where").Name
	out := e.MustRun("call", tool, "{}")
	mustContain(t, "python's own path", out, home)
}

// pythonServer is an MCP server in Python's standard library alone: it
// answers initialize, tools/list and tools/call of one tool, "where", with
// the interpreter's path and version.
const pythonServer = `#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}
    elif m == "tools/list":
        res = {"tools": [{"name": "where", "description": "Where Python runs from", "inputSchema": {"type": "object"}}]}
    elif m == "tools/call":
        res = {"content": [{"type": "text", "text": sys.executable + " " + sys.version.split()[0]}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "unknown method"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}), flush=True)
`

// inFolder reports whether path is dir or lies under it.
func inFolder(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
