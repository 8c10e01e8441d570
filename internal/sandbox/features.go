package sandbox

import (
	"fmt"
	"strings"
)

// Features is what this kernel offers a sandbox.
type Features struct {
	OS          string `json:"os"`
	LandlockABI int    `json:"landlockAbi"` // 0: no Landlock
	// Namespaces: an unprivileged-style user namespace with a PID and a
	// network namespace in it could be created (tried, not guessed).
	Namespaces      bool   `json:"namespaces"`
	NamespacesError string `json:"namespacesError,omitempty"`
	Seccomp         bool   `json:"seccomp"`
	// CgroupV2 is true when a cgroup v2 hierarchy with the memory and pids
	// controllers is mounted. Plexus does not use cgroups (it uses rlimits);
	// this is shown so that users know what a stricter limit would need.
	CgroupV2       bool   `json:"cgroupV2"`
	CgroupV2Detail string `json:"cgroupV2Detail,omitempty"`
	// Root: the daemon runs as root, so the process limit is a pids cgroup
	// (the kernel exempts root from RLIMIT_NPROC).
	Root bool `json:"root,omitempty"`
}

// Lines describes the features for `plexus doctor`, one per line.
func (f Features) Lines() []string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	ll := "not available"
	if f.LandlockABI > 0 {
		ll = fmt.Sprintf("ABI %d", f.LandlockABI)
		var has []string
		has = append(has, "files")
		if f.LandlockABI >= landlockNetABI {
			has = append(has, "TCP ports")
		}
		if f.LandlockABI >= landlockScopeABI {
			has = append(has, "signal and abstract-socket scopes")
		}
		ll += " (" + strings.Join(has, ", ") + ")"
	}
	ns := yes(f.Namespaces)
	if f.NamespacesError != "" {
		ns += " (" + f.NamespacesError + ")"
	}
	cg := yes(f.CgroupV2)
	if f.CgroupV2Detail != "" {
		cg += " (" + f.CgroupV2Detail + "; limits use rlimits)"
	}
	nproc := "RLIMIT_NPROC, counted in the server's own user namespace"
	if f.Root {
		nproc = "a pids cgroup per server (the daemon runs as root, whose processes the kernel exempts from RLIMIT_NPROC)"
	}
	return []string{
		"landlock: " + ll,
		"process limit: " + nproc,
		"user, pid and network namespaces: " + ns,
		"seccomp filters: " + yes(f.Seccomp),
		"cgroup v2: " + cg,
	}
}

// Landlock ABI versions that bring what the sandbox uses.
const (
	landlockMinABI   = 1 // files
	landlockNetABI   = 4 // TCP bind and connect by port
	landlockScopeABI = 6 // signals and abstract unix sockets scoped to the sandbox
)

// Missing lists what this kernel lacks to enforce p, each as a sentence;
// none means the sandbox can be enforced.
func (p *Policy) Missing(f Features) []string {
	var out []string
	if f.OS != "linux" {
		return []string{"sandboxes need Linux (Landlock and namespaces); this is " + f.OS}
	}
	if f.LandlockABI < landlockMinABI {
		out = append(out, "Landlock is not available (needs Linux ≥ 5.13 with landlock in the lsm= boot list)")
	}
	if !f.Namespaces {
		msg := "user namespaces cannot be created (they hold the server's own process count, PID and network namespace)"
		if p.Network.Mode == NetworkList {
			msg = "user namespaces cannot be created (they hold the server's own process count, PID and network namespace; a host:port list is enforced by a network namespace whose only way out is Plexus's proxy)"
		}
		if f.NamespacesError != "" {
			msg += ": " + f.NamespacesError
		}
		out = append(out, msg)
	}
	if !f.Seccomp {
		out = append(out, "seccomp filters are not available (they refuse ptrace)")
	}
	return out
}
