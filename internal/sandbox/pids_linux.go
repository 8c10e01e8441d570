package sandbox

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The kernel does not apply RLIMIT_NPROC to root's processes, so a daemon
// running as root caps the server's processes with a pids cgroup: v1's pids
// hierarchy, or v2 with the pids controller. The launcher joins it before
// it executes the server, so everything the server starts is counted.

// pidsRoots are where a pids hierarchy is mounted on common systems.
var pidsRoots = []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"}

// pidsUsers counts, per pids cgroup, the starts of this daemon that
// prepared it and have not released it: a server started again while its
// last process is still being cleaned up shares the cgroup (it is named
// after the private folder), and the old start's release must not remove
// it between the new one's PreparePids and its launcher's join.
var pidsUsers = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// PreparePids gives p a pids cgroup of its own, with pids.max set to the
// process limit, when the daemon runs as root. The cgroup is named after
// the private folder, so a restarted server reuses it. Each successful
// call is paired with a ReleasePids.
func PreparePids(p *Policy) error {
	if os.Getuid() != 0 || p.Limits.Processes == 0 {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(p.Private))
	name := "plexus-sandbox-" + strconv.FormatUint(h.Sum64(), 16)
	var last error = fmt.Errorf("no pids cgroup hierarchy is mounted")
	pidsUsers.Lock()
	defer pidsUsers.Unlock()
	for _, root := range pidsRoots {
		if !isPidsRoot(root) {
			continue
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			last = err
			continue
		}
		max := strconv.FormatUint(p.Limits.Processes, 10)
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(max), 0o644); err != nil {
			last = err
			continue
		}
		p.PidsCgroup = dir
		pidsUsers.n[dir]++
		return nil
	}
	return fmt.Errorf("the daemon runs as root, whose processes the kernel exempts from the process limit (RLIMIT_NPROC), and no pids cgroup could be made: %v", last)
}

// isPidsRoot reports whether root is a pids hierarchy: v1's own mount, or
// v2 with pids among its controllers.
func isPidsRoot(root string) bool {
	if filepath.Base(root) == "pids" {
		_, err := os.Stat(filepath.Join(root, "cgroup.procs"))
		return err == nil
	}
	b, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	return err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " pids ")
}

// joinPids moves this process into its pids cgroup.
func joinPids(dir string) error {
	if dir == "" {
		return nil
	}
	pid := strconv.Itoa(os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0o644); err != nil {
		return fmt.Errorf("joining the pids cgroup %s: %w", dir, err)
	}
	return nil
}

// ReleasePids removes p's pids cgroup once no other start of this daemon
// holds it and it is empty; a cgroup still in use stays.
func ReleasePids(p *Policy) {
	if p.PidsCgroup == "" {
		return
	}
	pidsUsers.Lock()
	defer pidsUsers.Unlock()
	if pidsUsers.n[p.PidsCgroup]--; pidsUsers.n[p.PidsCgroup] > 0 {
		return
	}
	delete(pidsUsers.n, p.PidsCgroup)
	os.Remove(p.PidsCgroup)
}
