//go:build linux

package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// run interprets the seccomp program (the instructions filterProgram uses)
// on one system call and returns the action.
func run(t *testing.T, prog []unix.SockFilter, arch uint32, nr uintptr, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[dataNr:], uint32(nr))
	binary.LittleEndian.PutUint32(data[dataArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[dataArg0+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if acc == in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			if acc&in.K != 0 {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			if acc >= in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

func TestSeccompProgram(t *testing.T) {
	arch, err := auditArch()
	if err != nil {
		t.Skip(err)
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill   = unix.SECCOMP_RET_KILL_PROCESS
	)
	type call struct {
		what string
		nr   uintptr
		args []uint64
		// want under network none or a host:port list, and under all
		restricted, all uint32
	}
	calls := []call{
		{"read", unix.SYS_READ, nil, allow, allow},
		{"ptrace", unix.SYS_PTRACE, nil, eperm, eperm},
		{"bpf", unix.SYS_BPF, nil, eperm, eperm},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, nil, eperm, eperm},
		{"mount", unix.SYS_MOUNT, nil, eperm, eperm},
		{"setns", unix.SYS_SETNS, nil, eperm, eperm},
		{"fsopen", unix.SYS_FSOPEN, nil, eperm, eperm},
		{"x32 read", 0x40000000, nil, eperm, eperm},
		{"TCP socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, allow, allow},
		{"TCP socket, IPPROTO_TCP", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP}, allow, allow},
		{"TCP6 socket", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM}, allow, allow},
		{"SCTP stream socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}, eperm, allow},
		{"UDP socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM}, eperm, allow},
		{"UDP socket, nonblocking", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC}, eperm, allow},
		{"UDP6 socket", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_DGRAM}, eperm, allow},
		{"raw socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, eperm, allow},
		{"packet socket", unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW}, eperm, eperm},
		{"unix stream socket", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eperm, eperm},
		{"unix datagram socket", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, eperm, eperm},
		{"vsock socket", unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, eperm, eperm},
		{"netlink route socket", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, allow, allow},
		{"netlink audit socket", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, eperm, eperm},
		{"unix stream pair", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, allow, allow},
		{"unix seqpacket pair", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET}, allow, allow},
		{"unix datagram pair", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, eperm, eperm},
		{"fork (clone SIGCHLD)", unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, allow, allow},
		{"thread (clone CLONE_VM|CLONE_THREAD…)", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM}, allow, allow},
		{"clone CLONE_NEWUSER", unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm, eperm},
		{"clone CLONE_NEWNS", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNS}, eperm, eperm},
		{"unshare CLONE_NEWUSER", unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWUSER}, eperm, eperm},
		{"unshare CLONE_NEWNET", unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWNET}, eperm, eperm},
		{"unshare CLONE_FILES", unix.SYS_UNSHARE, []uint64{unix.CLONE_FILES}, allow, allow},
		{"clone3", unix.SYS_CLONE3, nil, enosys, enosys},
		{"ioctl TIOCSTI", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, eperm, eperm},
		{"ioctl TIOCLINUX", unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, eperm, eperm},
		{"ioctl TCGETS", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow, allow},
		{"ioctl TIOCGWINSZ", unix.SYS_IOCTL, []uint64{1, unix.TIOCGWINSZ}, allow, allow},
		// The high half of an argument is not the family.
		{"UDP socket, high bits set", unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_INET, unix.SOCK_DGRAM}, eperm, allow},
		{"unix socket, high bits set", unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_UNIX, unix.SOCK_STREAM}, eperm, eperm},
	}
	for _, network := range []string{NetworkNone, NetworkList, NetworkAll} {
		prog, err := filterProgram(arch, network)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			want := c.restricted
			if network == NetworkAll {
				want = c.all
			}
			if got := run(t, prog, arch, c.nr, c.args...); got != want {
				t.Errorf("network %s: %s: action %#x, want %#x", network, c.what, got, want)
			}
		}
		if got := run(t, prog, arch^1, unix.SYS_READ); got != kill {
			t.Errorf("another architecture's call: %#x, want kill", got)
		}
	}
}
