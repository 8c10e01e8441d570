package localapi

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The daemon's check of the process at the other end of the socket, on
// Linux, from /proc: it must be in the daemon's own PID and user
// namespaces — a sandboxed server has its own (package sandbox), and so
// has a container or another sandbox that reached the socket — and it
// must not descend from the daemon (peerproc.go).

// procRoot is where /proc is mounted.
const procRoot = "/proc"

// nsKinds are the namespaces a peer must share with the daemon.
var nsKinds = []string{"pid", "user"}

// selfProc is what the daemon knows of its own process from /proc; nil
// when /proc cannot tell — not mounted, or mounted for another PID
// namespace than the daemon's (its pids would name other processes) —
// and then only the uid and the token are checked.
var selfProc = sync.OnceValue(func() map[string]string {
	if self, err := os.Readlink(filepath.Join(procRoot, "self")); err != nil || self != strconv.Itoa(os.Getpid()) {
		return nil
	}
	ns := map[string]string{}
	for _, kind := range nsKinds {
		l, err := os.Readlink(filepath.Join(procRoot, "self", "ns", kind))
		if err != nil {
			return nil
		}
		ns[kind] = l
	}
	return ns
})

// checkProcess admits process pid (as the daemon's PID namespace numbers
// it; 0 for one outside it) of a peer whose uid was admitted; sameUID
// tells the daemon's own user from root. A namespace the daemon's user may
// not read is refused for a process of that same user (it hid itself: it
// made itself undumpable) and let be for root's, which the daemon's user
// may not inspect and which may do anything anyway.
func checkProcess(root string, pid int, sameUID bool) error {
	self := selfProc()
	if self == nil || pid == os.Getpid() {
		return nil // nothing to tell, or the daemon's own process
	}
	if pid <= 0 {
		return errors.New("the caller runs outside the daemon's PID namespace (a container or sandbox): only programs beside the daemon may use its API")
	}
	for _, kind := range nsKinds {
		got, err := os.Readlink(filepath.Join(root, strconv.Itoa(pid), "ns", kind))
		switch {
		case err != nil && sameUID:
			return errors.New("the caller's process cannot be checked")
		case err != nil:
		case got != self[kind]:
			return fmt.Errorf("the caller runs in another %s namespace than the daemon (a sandbox or a container): only programs outside any sandbox may use its API", kind)
		}
	}
	return notDescendant(pid, os.Getpid(), func(p int) (int, error) {
		b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(p), "stat"))
		if err != nil {
			return 0, err
		}
		return statParent(b)
	})
}

// statParent reads the parent pid from /proc/PID/stat: "PID (COMM) STATE
// PPID …". COMM is the process's own name, up to 16 bytes of anything —
// ")" and spaces among them — so the fields are read after the last ")".
func statParent(b []byte) (int, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, errors.New("malformed stat")
	}
	pp, err := strconv.Atoi(f[1])
	if err != nil || pp < 0 {
		return 0, errors.New("malformed stat")
	}
	return pp, nil
}
