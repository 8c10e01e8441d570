package loadtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
		{Setup: "(b) Plexus, every server eager", RSS: 50 << 20, Daemon: 10 << 20, Bridges: 8 << 20, Shims: 12 << 20, Processes: 9},
	}})
	out := b.String()
	for _, want := range []string{"5 clients", "(a) each client its own servers", "100.0", "(c) Plexus on demand, idle", "—",
		"   12.0      20.0", // (b)'s shims, and its servers: what is not the daemon, a bridge or a shim
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// TestShimsRSSCountsTheDaemonsShims: a child of the daemon that runs as a
// lifeline shim is counted, with its memory; the daemon is not.
func TestShimsRSSCountsTheDaemonsShims(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if n := shimsRSS(os.Getpid()); n != 0 {
		t.Fatalf("%d bytes of shims before any", n)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, shimCommand), []byte("sleep 10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", shimCommand) // argv[1] is the shim's subcommand
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); shimsRSS(os.Getpid()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shim's memory is not counted")
		}
	}
}
