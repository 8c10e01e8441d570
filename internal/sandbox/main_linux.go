package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Main is the launcher: args are [policy-json, "--", path, arg...]. It
// applies the policy to itself and executes path; it returns only on error,
// with exit code 126 and the reason on stderr, having run nothing.
func Main(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "plexus sandbox: usage: POLICY -- command [arg...]")
		return 2
	}
	p, err := decodePolicy(args[0])
	if err == nil {
		err = enter(p, args[2], args[2:])
	}
	fmt.Fprintf(os.Stderr, "plexus sandbox: the server was not started: %v\n", err)
	return 126
}

// enter confines this process and executes path. The seccomp filter applies
// to the calling thread only, so everything from there to exec runs on one
// locked thread.
func enter(p *Policy, path string, argv []string) error {
	runtime.LockOSThread()
	tmp := filepath.Join(p.Private, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("creating the private folder: %w", err)
	}
	env := []string{"TMPDIR=" + tmp}
	if p.Network.Mode == NetworkNone {
		// Without a network npx and uvx would retry the registry until the
		// start times out: they run from their caches instead.
		env = append(env, "npm_config_offline=true", "UV_OFFLINE=1")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	rules, err := fileRules(p, path, os.Getenv("HOME"))
	if err != nil {
		return err
	}
	if err := joinPids(p.PidsCgroup); err != nil {
		return err
	}
	if err := setLimits(p.Limits); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := restrictLandlock(p, rules); err != nil {
		return err
	}
	if err := denySyscalls(); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// setLimits sets soft and hard limits, never above the current hard ones.
func setLimits(l Limits) error {
	set := func(name string, res int, v uint64) error {
		if v == 0 {
			return nil
		}
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err != nil {
			return fmt.Errorf("getrlimit %s: %w", name, err)
		}
		v = min(v, cur.Max)
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setrlimit %s: %w", name, err)
		}
		return nil
	}
	if err := set("RLIMIT_DATA", unix.RLIMIT_DATA, l.MemoryBytes); err != nil {
		return err
	}
	if err := set("RLIMIT_NPROC", unix.RLIMIT_NPROC, l.Processes); err != nil {
		return err
	}
	if err := set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, l.OpenFiles); err != nil {
		return err
	}
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("setrlimit RLIMIT_CORE: %w", err)
	}
	return nil
}

// dropCapabilities empties the bounding and ambient sets, so that the
// server has no capability even when the daemon runs as root (a root
// process regains the bounding set at exec).
func dropCapabilities() error {
	if os.Getuid() != 0 {
		// Not root in its namespace: exec gives it no capability, and
		// no_new_privs makes file capabilities void.
		return nil
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	return nil
}
