package loadtest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTreeRSSCountsDescendants: a process's tree is itself and its
// children, each counted once, with their memory.
func TestTreeRSSCountsDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	alone, n := treeRSS([]int{os.Getpid()})
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	with, m := treeRSS([]int{os.Getpid(), cmd.Process.Pid})
	if alone <= 0 || m != n+1 || with <= alone {
		t.Fatalf("alone %d bytes in %d processes; with a child %d bytes in %d", alone, n, with, m)
	}
}

// TestPrintFleet: the table names every setup and says "—" for a time
// not measured.
func TestPrintFleet(t *testing.T) {
	var b bytes.Buffer
	printFleet(&b, &FleetReport{Clients: 5, Servers: []string{"memory"}, Rows: []FleetRow{
		{Setup: "(a) each client its own servers", RSS: 100 << 20, Processes: 40, Cold: time.Second, Warm: time.Millisecond},
		{Setup: "(c) Plexus on demand, idle", RSS: 20 << 20, Daemon: 15 << 20, Processes: 6},
	}})
	out := b.String()
	for _, want := range []string{"5 clients", "(a) each client its own servers", "100.0", "(c) Plexus on demand, idle", "—"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}
