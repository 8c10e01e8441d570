package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in the sandbox: reading or writing other
// processes' memory; kernel interfaces a tool server has no use for that
// are frequent in local privilege escalations; mounts and namespaces, which
// the launcher has arranged already; and io_uring, which could open sockets
// without a system call the filter sees.
var deniedSyscalls = []uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF,
	unix.SYS_USERFAULTFD, unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_SETNS,
	unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOVE_MOUNT, unix.SYS_MOUNT_SETATTR,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}

// namespaceFlags are clone's and unshare's flags that make a namespace.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// auditArch is the AUDIT_ARCH value of this build's architecture.
func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	case "riscv64":
		return unix.AUDIT_ARCH_RISCV64, nil
	}
	return 0, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

// denySyscalls installs the filter on the calling thread (the one that will
// exec the server). Another architecture's calls (x32, i386 on amd64) are
// refused whole, so that their numbers cannot slip past. What it refuses
// is filterProgram's.
func denySyscalls(network string) error {
	arch, err := auditArch()
	if err != nil {
		return err
	}
	prog, err := filterProgram(arch, network)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// Offsets in struct seccomp_data: the low 32 bits of an argument (the
// architectures of auditArch are little-endian).
const (
	dataNr   = 0
	dataArch = 4
	dataArg0 = 16
	dataArg1 = 24
	dataArg2 = 32
)

// insn is a BPF instruction whose jumps name labels.
type insn struct {
	f      unix.SockFilter
	jt, jf string
	label  string // this instruction's own, if any
}

// filterProgram is the seccomp program for arch and a network mode. It
// refuses (EPERM):
//
//   - deniedSyscalls;
//   - a socket of any family but IPv4, IPv6 and netlink's routing one: no
//     unix socket can be made, so none is reached, pathname or abstract —
//     Landlock does not govern connecting to a pathname socket on this
//     kernel generation (before ABI 9), and the daemon's own is one;
//   - socketpair but of two connected unix stream or seqpacket sockets
//     (libuv, Python and the like make them for their own children; a
//     datagram pair could send to any named datagram socket);
//   - with network "none" or a host:port list, an IPv4 or IPv6 socket that
//     is not TCP (UDP, raw, SCTP, …): the namespace has no way out for them
//     either, this is a second wall;
//   - the ioctls that type into a terminal (TIOCSTI, TIOCLINUX), should
//     one be open (CVE-2017-5226's way out of bubblewrap);
//   - clone and unshare with a namespace flag, so that no user namespace
//     (with every capability in it) is made, as Docker's default profile
//     and sandbox-runtime refuse them; clone3, whose flags sit in memory
//     the filter cannot read, fails with ENOSYS, so that the C library
//     falls back to clone.
func filterProgram(arch uint32, network string) ([]unix.SockFilter, error) {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	is := func(k uint32, target string) insn { return insn{f: unix.SockFilter{Code: jeq, K: k}, jt: target} }
	load := func(off uint32, label string) insn { return insn{f: unix.SockFilter{Code: ld, K: off}, label: label} }
	jump := func(target string) insn { return insn{f: unix.SockFilter{Code: jeq, K: 0}, jt: target, jf: target} }
	inet := "allow"
	if network != NetworkAll {
		inet = "tcp"
	}
	prog := []insn{
		load(dataArch, ""),
		{f: unix.SockFilter{Code: jeq, K: arch}, jf: "kill"},
		load(dataNr, ""),
		{f: unix.SockFilter{Code: jge, K: 0x40000000}, jt: "eperm"}, // x32 numbers
		is(unix.SYS_SOCKET, "socket"),
		is(unix.SYS_SOCKETPAIR, "socketpair"),
		is(unix.SYS_CLONE, "clone"),
		is(unix.SYS_UNSHARE, "clone"),
		is(unix.SYS_CLONE3, "enosys"),
		is(unix.SYS_IOCTL, "ioctl"),
	}
	for _, nr := range deniedSyscalls {
		prog = append(prog, is(uint32(nr), "eperm"))
	}
	prog = append(prog,
		jump("allow"),

		load(dataArg0, "socket"),
		is(unix.AF_INET, inet),
		is(unix.AF_INET6, inet),
		is(unix.AF_NETLINK, "netlink"),
		jump("eperm"),

		load(dataArg1, "tcp"),
		insn{f: unix.SockFilter{Code: and, K: 0xf}}, // SOCK_TYPE_MASK: without SOCK_CLOEXEC and SOCK_NONBLOCK
		insn{f: unix.SockFilter{Code: jeq, K: unix.SOCK_STREAM}, jf: "eperm"},
		load(dataArg2, ""),
		is(0, "allow"),
		is(unix.IPPROTO_TCP, "allow"),
		jump("eperm"),

		load(dataArg2, "netlink"),
		is(unix.NETLINK_ROUTE, "allow"),
		jump("eperm"),

		load(dataArg0, "socketpair"),
		insn{f: unix.SockFilter{Code: jeq, K: unix.AF_UNIX}, jf: "eperm"},
		load(dataArg1, ""),
		insn{f: unix.SockFilter{Code: and, K: 0xf}},
		is(unix.SOCK_STREAM, "allow"),
		is(unix.SOCK_SEQPACKET, "allow"),
		jump("eperm"),

		load(dataArg1, "ioctl"),
		is(unix.TIOCSTI, "eperm"),
		is(unix.TIOCLINUX, "eperm"),
		jump("allow"),

		load(dataArg0, "clone"),
		insn{f: unix.SockFilter{Code: jset, K: namespaceFlags}, jt: "eperm", jf: "allow"},

		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}, label: "allow"},
		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}, label: "eperm"},
		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}, label: "enosys"},
		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, label: "kill"},
	)
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = in.f
		for _, j := range []struct {
			label string
			off   *uint8
		}{{in.jt, &out[i].Jt}, {in.jf, &out[i].Jf}} {
			if j.label == "" {
				continue
			}
			t, ok := at[j.label]
			if !ok || t <= i || t-i-1 > 255 {
				return nil, fmt.Errorf("seccomp: bad jump to %q at %d", j.label, i)
			}
			*j.off = uint8(t - i - 1)
		}
	}
	return out, nil
}
