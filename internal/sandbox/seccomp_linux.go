package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in the sandbox: reading or writing other
// processes' memory, and kernel interfaces a tool server has no use for that
// are frequent in local privilege escalations.
var deniedSyscalls = []uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KEXEC_LOAD, unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF,
	unix.SYS_USERFAULTFD, unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
}

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
// refused whole, so that their numbers cannot slip past. With
// restrictSockets (network "none" or a host:port list) UDP, raw and packet
// sockets cannot be made either, and io_uring, which could make sockets
// without a system call the filter sees, cannot be set up: the network
// namespace already has no way out for them, this is a second wall.
func denySyscalls(restrictSockets bool) error {
	arch, err := auditArch()
	if err != nil {
		return err
	}
	prog, err := filterProgram(arch, restrictSockets)
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
)

// insn is a BPF instruction whose jumps name labels.
type insn struct {
	f      unix.SockFilter
	jt, jf string
	label  string // this instruction's own, if any
}

// filterProgram is the seccomp program for arch.
func filterProgram(arch uint32, restrictSockets bool) ([]unix.SockFilter, error) {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	is := func(k uint32, target string) insn { return insn{f: unix.SockFilter{Code: jeq, K: k}, jt: target} }
	prog := []insn{
		{f: unix.SockFilter{Code: ld, K: dataArch}},
		{f: unix.SockFilter{Code: jeq, K: arch}, jf: "kill"},
		{f: unix.SockFilter{Code: ld, K: dataNr}},
		{f: unix.SockFilter{Code: jge, K: 0x40000000}, jt: "eperm"}, // x32 numbers
	}
	denied := deniedSyscalls
	if restrictSockets {
		denied = append(slices.Clone(denied), unix.SYS_IO_URING_SETUP)
		prog = append(prog,
			insn{f: unix.SockFilter{Code: jeq, K: unix.SYS_SOCKET}, jf: "syscalls"},
			insn{f: unix.SockFilter{Code: ld, K: dataArg0}},
			is(unix.AF_INET, "type"),
			is(unix.AF_INET6, "type"),
			is(unix.AF_PACKET, "eperm"),
			insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}},
			insn{f: unix.SockFilter{Code: ld, K: dataArg1}, label: "type"},
			insn{f: unix.SockFilter{Code: and, K: 0xf}}, // SOCK_TYPE_MASK: without SOCK_CLOEXEC and SOCK_NONBLOCK
			is(unix.SOCK_DGRAM, "eperm"),
			is(unix.SOCK_RAW, "eperm"),
			insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}},
		)
	}
	for i, nr := range denied {
		in := is(uint32(nr), "eperm")
		if i == 0 {
			in.label = "syscalls"
		}
		prog = append(prog, in)
	}
	prog = append(prog,
		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}},
		insn{f: unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}, label: "eperm"},
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
