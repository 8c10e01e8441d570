package upstream

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A daemon that is SIGKILLed leaves nothing behind: the shim gets its
// parent-death signal and ends the whole group, grandchild included.
func TestShimOutlivesKilledDaemon(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	daemon := exec.Command(exe)
	daemon.Env = append(os.Environ(), daemonEnv+"=1")
	daemon.Stderr = os.Stderr
	out, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Wait()
	defer daemon.Process.Kill()

	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		t.Fatalf("daemon gave no server info: %v", err)
	}
	var info serverInfo
	if err := json.Unmarshal(line, &info); err != nil {
		t.Fatal(err)
	}
	if !processAlive(info.PGID) || !processAlive(info.PID) || !processAlive(info.Grandchild) {
		t.Fatalf("server group not running: %+v", info)
	}

	daemon.Process.Kill()
	daemon.Wait()

	requireGroupDead(t, info.PGID, 10*time.Second)
	for _, pid := range []int{info.PGID, info.PID, info.Grandchild} {
		if processAlive(pid) {
			t.Errorf("process %d survived the daemon", pid)
		}
	}
}
