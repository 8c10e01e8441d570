//go:build unix

package lifeline

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is every process the tests need: with shimArg it is the
// shim; with roleEnv set it is a server, a helper that leaves the server's
// session, a double-forking parent, or a daemon that the test kills.
const (
	shimArg = "-lifeline-shim"
	roleEnv = "LIFELINE_TEST_ROLE"
	pidsEnv = "LIFELINE_TEST_PIDS" // the file each process appends its pid to
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(Main(os.Args[2:]))
	}
	switch os.Getenv(roleEnv) {
	case "":
		os.Exit(m.Run())
	case "server", "server-exits":
		os.Exit(runServer(os.Getenv(roleEnv) == "server-exits"))
	case "escapee":
		// Left its parent's session and deaf to SIGTERM: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		recordPid()
		time.Sleep(time.Hour)
	case "double-fork":
		// Starts an escapee and exits at once: the escapee is orphaned.
		if err := spawn("escapee", true); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "daemon":
		os.Exit(runDaemon())
	}
	os.Exit(3)
}

// recordPid appends this process's pid to the test's file.
func recordPid() {
	f, err := os.OpenFile(os.Getenv(pidsEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(4)
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()
}

// spawn starts the test binary in role, in a session of its own if setsid.
func spawn(role string, setsid bool) error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	return cmd.Start()
}

// runServer is a server with three kinds of helpers: one in a session of
// its own, one orphaned by a double fork, and one in its group that
// ignores SIGTERM. It prints "ready" once all are recorded, then exits or
// waits to be ended.
func runServer(exit bool) int {
	signal.Ignore(syscall.SIGTERM)
	recordPid()
	for _, h := range []struct {
		role   string
		setsid bool
	}{{"escapee", true}, {"double-fork", false}, {"escapee", false}} {
		if err := spawn(h.role, h.setsid); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// Three helpers and the server itself.
	for deadline := time.Now().Add(10 * time.Second); countPids() < 4; {
		if time.Now().After(deadline) {
			return 5
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready")
	if exit {
		return 0
	}
	time.Sleep(time.Hour)
	return 0
}

// runDaemon starts the shim the way the daemon does and waits to be killed.
func runDaemon() int {
	cmd := exec.Command(os.Args[0], shimArg, "--", os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=server")
	cmd.Stdout = os.Stdout
	cmd.SysProcAttr = GroupAttr(syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		return 1
	}
	cmd.Wait()
	return 0
}

func countPids() int { return len(readPids(os.Getenv(pidsEnv))) }

func readPids(path string) []int {
	b, _ := os.ReadFile(path)
	var pids []int
	for _, l := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(l); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// startTree starts role (through the shim unless role is "daemon") and
// waits until the server and its helpers run. Whatever is left at the end
// of the test is killed.
func startTree(t *testing.T, role string) (cmd *exec.Cmd, pids func() []int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pids")
	args := []string{shimArg, "--", os.Args[0]}
	if role == "daemon" {
		args = nil
	}
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), roleEnv+"="+role, pidsEnv+"="+file)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids = func() []int { return readPids(file) }
	t.Cleanup(func() {
		for _, pid := range pids() {
			syscall.Kill(pid, syscall.SIGKILL) // processes this test started
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the server did not start its helpers: %q, %v", line, err)
	}
	if n := len(pids()); n != 4 {
		t.Fatalf("%d processes recorded, want 4", n)
	}
	return cmd, pids
}

// requireAllGone fails unless every pid has ended within d.
func requireAllGone(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var alive []int
		for _, pid := range pids {
			if ProcessAlive(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of %v outlived their server", alive, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDescendantsThatLeftTheGroupEndWhenTheServerStops: the shim is told
// to stop (SIGTERM, as the daemon stops a server); a helper in a session of
// its own, an orphan of a double fork and a helper deaf to SIGTERM all end
// with it.
func TestDescendantsThatLeftTheGroupEndWhenTheServerStops(t *testing.T) {
	cmd, pids := startTree(t, "server")
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Errorf("shim ended with %v, want exit code 143", err)
	}
	requireAllGone(t, pids(), 5*time.Second)
}

// TestDescendantsThatLeftTheGroupEndWhenTheServerExits: the server exits
// by itself; its helpers do not outlive it.
func TestDescendantsThatLeftTheGroupEndWhenTheServerExits(t *testing.T) {
	cmd, pids := startTree(t, "server-exits")
	if err := cmd.Wait(); err != nil {
		t.Errorf("shim ended with %v, want the server's exit code 0", err)
	}
	requireAllGone(t, pids(), 5*time.Second)
}

// TestDescendantsThatLeftTheGroupEndWhenTheDaemonIsKilled: the daemon is
// SIGKILLed; the parent-death signal reaches the shim, which ends the whole
// tree, not only its group.
func TestDescendantsThatLeftTheGroupEndWhenTheDaemonIsKilled(t *testing.T) {
	cmd, pids := startTree(t, "daemon")
	cmd.Process.Kill()
	cmd.Wait()
	requireAllGone(t, pids(), 5*time.Second)
}

func TestShimUsage(t *testing.T) {
	if code := Main(nil); code != 2 {
		t.Errorf("Main(nil) = %d, want 2", code)
	}
}
