package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
	if err := mapSelf(p); err != nil {
		return err
	}
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
	home := os.Getenv("HOME")
	caches, err := arrangeMounts(p, home)
	if err != nil {
		return err
	}
	env = append(env, caches...)
	// Again, now that the mounts are in place: the folder the daemon
	// started the shim in may lie under one of them.
	dir := p.Dir
	if dir == "" {
		dir = p.Private
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("the working directory: %w", err)
	}
	env = append(env, "PWD="+dir)
	rules, err := fileRules(p, path, home)
	if err != nil {
		return err
	}
	var proxyPort uint16
	if p.Network.Mode == NetworkList {
		if proxyPort, err = openProxy(p.ProxySocket); err != nil {
			return err
		}
		env = append(env, proxyEnv(proxyPort)...)
	}
	env = append(env, inherited(os.Environ(), env)...)
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
	if err := restrictLandlock(p, rules, proxyPort); err != nil {
		return err
	}
	if err := denySyscalls(p.Network.Mode); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// proxyEnv points the programs that honour the usual proxy variables at
// the daemon's proxy: curl, Python, Go, npm (lower and upper case), and
// Node.js ≥ 24's own fetch and http with NODE_USE_ENV_PROXY. NO_PROXY is
// emptied: nothing is reachable without the proxy.
func proxyEnv(port uint16) []string {
	url := "http://127.0.0.1:" + strconv.Itoa(int(port))
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
	}
	return append(env, "NO_PROXY=", "no_proxy=", "NODE_USE_ENV_PROXY=1",
		"npm_config_proxy="+url, "npm_config_https_proxy="+url)
}

// inherited is the daemon's environment for the server without the
// variables the launcher sets itself.
func inherited(environ, set []string) []string {
	own := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !own[k] {
			out = append(out, kv)
		}
	}
	return out
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

// dropCapabilities empties every capability set the server could get one
// from: the bounding set (a process of uid 0 regains it at exec), the
// inheritable one (uid 0 regains it at exec too, and Isolate's ambient
// capabilities put their own in it), the ambient one, and the launcher's
// own effective and permitted sets, which it needs no longer.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	// Only uid 0 regains the bounding set at exec, and only it may drop
	// from it (CAP_SETPCAP).
	for c := 0; os.Getuid() == 0 && c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}
