package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/lifeline"
)

// orphanReport, in the environment of a child test binary, names the file
// where it writes the pids of every process below it.
const orphanReport = "PLEXUS_TEST_ORPHAN_REPORT"

// TestDiesWithTestBinary: when a test binary dies without running its
// cleanup (killed, or crashed as on its -timeout panic), every process the
// harness started for it dies too: the daemon, the server the daemon runs
// (behind its lifeline shim), and what a command started left in its group.
func TestDiesWithTestBinary(t *testing.T) {
	if os.Getenv(orphanReport) != "" {
		t.Skip("run as the child of its variants")
	}
	for _, how := range []string{"kill", "crash"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			report := filepath.Join(t.TempDir(), "pids")
			cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanChild$", "-test.v")
			// The child dies without its cleanup, so its temporary
			// folders (the daemon's home) go under one of this test's,
			// removed with it. A short path: the home's socket must fit
			// in a unix socket address.
			tmp, err := os.MkdirTemp("", "orphan")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(tmp) })
			cmd.Env = append(os.Environ(), orphanReport+"="+report, "PLEXUS_TEST_ORPHAN_HOW="+how, "TMPDIR="+tmp)
			var out SyncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			// Its stdin's end tells the child to crash.
			crash, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			// Not Start: this test is about what the harness does inside the
			// child; its own group is ended below, by hand.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := make(chan struct{})
			go func() { cmd.Wait(); close(waited) }()
			defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-waited }()

			pids := waitReport(t, report, waited, &out)
			if len(pids) < 5 {
				t.Fatalf("the child reported %d processes, want its daemon, shim, server, sh and sleep: %v\n%s", len(pids), pids, &out)
			}
			if how == "kill" {
				cmd.Process.Kill()
			} else {
				crash.Close()
			}
			select {
			case <-waited:
			case <-time.After(60 * time.Second):
				t.Fatalf("the child test binary did not end\n%s", &out)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				var alive []string
				for _, pid := range pids {
					if lifeline.ProcessAlive(pid) {
						argv, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
						alive = append(alive, strconv.Itoa(pid)+" "+strings.ReplaceAll(string(argv), "\x00", " "))
					}
				}
				if len(alive) == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("5s after the test binary died, these of its processes live on: %q\n%s", alive, &out)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// waitReport waits for the child's report and returns its pids.
func waitReport(t *testing.T, report string, waited <-chan struct{}, out *SyncBuffer) []int {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if b, err := os.ReadFile(report); err == nil && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("report %q: %v", b, err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		select {
		case <-waited:
			t.Fatalf("the child test binary ended before it reported\n%s", out)
		case <-deadline:
			t.Fatalf("no report from the child test binary\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestOrphanChild is the child of TestDiesWithTestBinary: it starts a
// daemon with a stdio server and a command that leaves a process in its
// group, reports every process below it, and then waits to be killed, or
// for its stdin to end and then crashes, as a test binary does on its
// -timeout.
func TestOrphanChild(t *testing.T) {
	report := os.Getenv(orphanReport)
	if report == "" {
		t.Skip("only the child of TestDiesWithTestBinary")
	}
	e := New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	sh := exec.Command("sh", "-c", "sleep 1000 & exec sleep 1001")
	if err := Start(t, sh); err != nil {
		t.Fatal(err)
	}
	// The shim and the server below the daemon, the sh and its sleep.
	var pids []int
	deadline := time.Now().Add(time.Minute)
	for len(lifeline.Descendants(e.DaemonPID())) < 2 || len(pids) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start: processes below the test binary: %v\n%s", pids, e.DaemonOutput())
		}
		time.Sleep(20 * time.Millisecond)
		pids = lifeline.Descendants(os.Getpid())
	}
	var b strings.Builder
	for _, pid := range pids {
		b.WriteString(strconv.Itoa(pid) + " ")
	}
	if err := os.WriteFile(report, []byte(b.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, os.Stdin)
	if os.Getenv("PLEXUS_TEST_ORPHAN_HOW") == "crash" {
		// Off the test's goroutine, so that no cleanup runs, as on -timeout.
		go panic("the test binary crashes, as on its -timeout")
	}
	select {}
}
