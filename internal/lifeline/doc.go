// Package lifeline makes sure that a stdio server's processes end with it:
// the lifeline shim that runs in front of every server, and the process
// group helpers the daemon uses to stop one.
//
// The shim is a tiny process between the daemon and a server. The kernel's
// parent-death signal reaches only the daemon's direct child, while e.g.
// `npx` runs the real server as a grandchild, and a server may start
// helpers that leave its process group (setsid, double forks). The shim
// outlives all of them: it is a child subreaper, so every orphan of the tree
// becomes its child, and when it ends the tree it signals every descendant
// by pid, not only its group.
//
// How each system gives the shim its hold on the tree is in proc_*.go: a
// subreaper and /proc on Linux, procctl(2)'s reaper on FreeBSD, the process
// table (sysctl kern.proc) but no subreaper on macOS, and a Job Object
// that kills the tree when it closes on Windows (shim_windows.go).
package lifeline
