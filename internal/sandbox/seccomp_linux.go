package sandbox

import (
	"fmt"
	"runtime"
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
// refused whole, so that their numbers cannot slip past.
func denySyscalls() error {
	arch, err := auditArch()
	if err != nil {
		return err
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	n := uint8(len(deniedSyscalls))
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: 0},                      // seccomp_data.nr
		{Code: jge, Jt: n + 1, K: 0x40000000}, // x32 numbers
	}
	for i, nr := range deniedSyscalls {
		prog = append(prog, unix.SockFilter{Code: jeq, Jt: n - uint8(i), K: uint32(nr)})
	}
	prog = append(prog,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: eperm},
	)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
