package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

var (
	detectOnce sync.Once
	detected   Features
)

// Detect finds what this kernel offers, once per process: it asks Landlock
// for its ABI and starts a short process in new namespaces.
func Detect() Features {
	detectOnce.Do(func() { detected = detect() })
	return detected
}

func detect() Features {
	f := Features{OS: "linux", Root: os.Getuid() == 0}
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		f.LandlockABI = v
	}
	if err := probeNamespaces(); err != nil {
		f.NamespacesError = err.Error()
	} else {
		f.Namespaces = true
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		f.Seccomp = strings.Contains(string(b), "\nSeccomp:")
	}
	f.CgroupV2, f.CgroupV2Detail = cgroupV2()
	return f
}

// probeNamespaces runs `true` the way a sandboxed server is started.
func probeNamespaces() error {
	path, err := exec.LookPath("true")
	if err != nil {
		path = "/bin/true"
	}
	cmd := exec.Command(path)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Isolate(cmd.SysProcAttr, &Policy{Network: Network{Mode: NetworkNone}})
	return cmd.Run()
}

// cgroupV2 reports whether cgroup v2 with memory and pids controllers is
// mounted, either alone or (hybrid) beside v1.
func cgroupV2() (bool, string) {
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		b, err := os.ReadFile(dir + "/cgroup.controllers")
		if err != nil {
			continue
		}
		c := strings.Fields(string(b))
		has := func(s string) bool {
			for _, x := range c {
				if x == s {
					return true
				}
			}
			return false
		}
		if has("memory") && has("pids") {
			return true, ""
		}
		return false, "a v2 hierarchy at " + dir + " without the memory and pids controllers (they are on cgroup v1)"
	}
	return false, "only cgroup v1 is mounted"
}

// Isolate sets the namespaces a sandboxed server's first process starts in:
// a user namespace (mapping the daemon's own user and group to themselves)
// with a PID namespace, so that the whole tree ends with its first process
// and counts its processes apart from the user's others; a mount namespace,
// which the launcher arranges (arrangeMounts: its own /proc, /dev/shm and
// caches, Plexus's home covered); a System V IPC namespace; and for network
// "none" or a host:port list a network namespace with nothing but a
// loopback (up, with the proxy on it, for a list: see openProxy).
//
// The launcher maps the daemon's user and group to themselves in the user
// namespace (mapSelf), not the daemon: a team replica's daemon is not
// dumpable (it holds the store's key), so its child's /proc files, the
// maps among them, belong to root until the child executes, and a daemon
// that is not root could not write them.
//
// The launcher, unmapped when it starts, is not uid 0 in the user
// namespace, so exec leaves it no capability there but the ambient ones
// given here: CAP_SETUID and CAP_SETGID for its maps, CAP_SYS_ADMIN for its
// mounts, CAP_DAC_OVERRIDE, which an overlay's upper folder needs,
// CAP_SETPCAP, with which a root daemon's launcher empties the bounding
// set, and for a list CAP_NET_ADMIN, for the loopback. They are of the sandbox's own user namespace only, and the
// launcher drops them all before the server runs (dropCapabilities).
func Isolate(attr *syscall.SysProcAttr, p *Policy) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE, unix.CAP_SETPCAP)
	switch p.Network.Mode {
	case NetworkNone:
		attr.Cloneflags |= syscall.CLONE_NEWNET
	case NetworkList:
		attr.Cloneflags |= syscall.CLONE_NEWNET
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
	}
}

// mapSelf maps the launcher's user and group (of the namespace outside,
// Policy.UID and GID) to themselves in its user namespace, which it is
// the first to (Isolate), with setgroups denied.
func mapSelf(p *Policy) error {
	for _, f := range []struct{ file, text string }{
		{"setgroups", "deny"},
		{"gid_map", fmt.Sprintf("%d %d 1\n", p.GID, p.GID)},
		{"uid_map", fmt.Sprintf("%d %d 1\n", p.UID, p.UID)},
	} {
		if err := os.WriteFile("/proc/self/"+f.file, []byte(f.text), 0); err != nil {
			return fmt.Errorf("mapping the daemon's user in the sandbox: %w", err)
		}
	}
	return nil
}
