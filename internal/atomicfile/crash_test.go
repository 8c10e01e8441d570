//go:build linux || darwin

package atomicfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
)

// The child modes of this test binary: save a server and its secret the way
// the daemon does (secrets first, then settings), and either SIGKILL itself
// at the Nth step of the writes, or run out of file size (EFBIG).
const (
	envHome    = "PLEXUS_CRASH_HOME"
	envCrashAt = "PLEXUS_CRASH_AT"
	envFsize   = "PLEXUS_CRASH_FSIZE"
)

func TestMain(m *testing.M) {
	if home := os.Getenv(envHome); home != "" {
		os.Exit(child(home))
	}
	os.Exit(m.Run())
}

func child(home string) int {
	if at, err := strconv.Atoi(os.Getenv(envCrashAt)); err == nil {
		n := 0
		atomicfile.SetTestHook(func(step string) {
			if n == at {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // never returns
			}
			n++
		})
	}
	if lim, err := strconv.ParseUint(os.Getenv(envFsize), 10, 64); err == nil {
		// A write past the limit fails with EFBIG instead of killing us.
		signal.Ignore(syscall.SIGXFSZ)
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: lim, Max: lim}); err != nil {
			fmt.Println("setrlimit:", err)
			return 2
		}
	}
	st, err := store.Open(home)
	if err != nil {
		fmt.Println("open:", err)
		return 2
	}
	secrets := st.Creds()
	secrets.Env["NEW_TOKEN"] = strings.Repeat("n", 5000)
	if _, err := st.CommitCreds(secrets.Revision, secrets); err != nil {
		fmt.Println("creds:", err)
		return 3
	}
	cfg := st.Config()
	cfg.MCP.Servers["new"] = config.Server{Type: "stdio", Command: "/bin/new",
		Args: []string{strings.Repeat("a", 5000)}, Env: map[string]config.Ref{"TOKEN": {Env: "NEW_TOKEN"}}}
	if _, err := st.CommitConfig(cfg.Revision, cfg); err != nil {
		fmt.Println("config:", err)
		return 4
	}
	return 0
}

// seed makes a home with one server and one secret: the "old" state.
func seed(t *testing.T) (home string, oldCfg, oldCreds []byte) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	st, err := store.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Creds()
	c.Env["OLD_TOKEN"] = "old"
	if _, err := st.CommitCreds(c.Revision, c); err != nil {
		t.Fatal(err)
	}
	cfg := st.Config()
	cfg.MCP.Servers = map[string]config.Server{"old": {Type: "stdio", Command: "/bin/old"}}
	if _, err := st.CommitConfig(cfg.Revision, cfg); err != nil {
		t.Fatal(err)
	}
	oldCfg, _ = os.ReadFile(filepath.Join(home, store.ConfigFile))
	oldCreds, _ = os.ReadFile(filepath.Join(home, store.CredsFile))
	return home, oldCfg, oldCreds
}

func runChild(t *testing.T, home string, env ...string) (int, string) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{envHome + "=" + home}, env...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), string(out)
		}
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestCrashAtEveryStep SIGKILLs a process saving a server and its secret at
// every step of the two atomic writes (R-OWN-3): afterwards each file is
// the old or the new one, never torn; the settings never reference a
// secret that was not saved; and the store opens (the daemon starts),
// removing the temporary files the crash left.
func TestCrashAtEveryStep(t *testing.T) {
	// 4 hooked steps in each of the three writes: the secrets, the kept
	// version of the settings (store.RevisionsDir), the settings.
	const steps = 12
	for at := 0; at <= steps; at++ {
		t.Run(fmt.Sprint("step", at), func(t *testing.T) {
			home, oldCfg, oldCreds := seed(t)
			code, out := runChild(t, home, envCrashAt+"="+strconv.Itoa(at))
			if at < steps && code != -int(syscall.SIGKILL) {
				t.Fatalf("the child was not killed at step %d: exit %d %s", at, code, out)
			}
			if at == steps && code != 0 {
				t.Fatalf("the child failed without a crash: exit %d %s", code, out)
			}
			cfgNow, _ := os.ReadFile(filepath.Join(home, store.ConfigFile))
			credsNow, _ := os.ReadFile(filepath.Join(home, store.CredsFile))
			cfgNew := !bytes.Equal(cfgNow, oldCfg)
			credsNew := !bytes.Equal(credsNow, oldCreds)
			st, err := store.Open(home) // decodes both strictly: a torn file fails here
			if err != nil {
				t.Fatalf("after a crash at step %d the store does not open: %v", at, err)
			}
			if cfgNew {
				if _, ok := st.Config().MCP.Servers["new"]; !ok {
					t.Fatalf("extensions.json changed but is not the new one")
				}
				if !credsNew {
					t.Fatalf("the new settings were saved before their secret")
				}
			}
			if credsNew && st.Creds().Env["NEW_TOKEN"] == "" {
				t.Fatalf("creds.json changed but is not the new one")
			}
			if at == steps && (!cfgNew || !credsNew) {
				t.Fatalf("a save that was not interrupted did not land")
			}
			strays, _ := filepath.Glob(filepath.Join(home, ".*.tmp-*"))
			kept, _ := filepath.Glob(filepath.Join(home, store.RevisionsDir, ".*.tmp-*"))
			if strays = append(strays, kept...); len(strays) > 0 {
				t.Fatalf("temporary files left after Open: %v", strays)
			}
		})
	}
}

// TestFileTooLarge: a save that fails with EFBIG (RLIMIT_FSIZE) leaves both
// files byte-identical and no temporary file, and says why.
func TestFileTooLarge(t *testing.T) {
	home, oldCfg, oldCreds := seed(t)
	code, out := runChild(t, home, envFsize+"=4096")
	if code != 3 || !strings.Contains(out, "file too large") {
		t.Fatalf("exit %d, output %q; want the creds save to fail with EFBIG", code, out)
	}
	cfgNow, _ := os.ReadFile(filepath.Join(home, store.ConfigFile))
	credsNow, _ := os.ReadFile(filepath.Join(home, store.CredsFile))
	if !bytes.Equal(cfgNow, oldCfg) || !bytes.Equal(credsNow, oldCreds) {
		t.Fatal("a failed save changed a file")
	}
	if strays, _ := filepath.Glob(filepath.Join(home, ".*.tmp-*")); len(strays) > 0 {
		t.Fatalf("temporary files left: %v", strays)
	}
}
