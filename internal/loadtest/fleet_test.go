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

// TestTreeMemoryCountsDescendants: a process's tree is itself and its
// children, each counted once, with their memory; a page the child shares
// with others counts in full in its RSS and in part in its PSS.
func TestTreeMemoryCountsDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	alone, alonePSS, n := treeMemory([]int{os.Getpid()})
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	with, withPSS, m := treeMemory([]int{os.Getpid(), cmd.Process.Pid})
	if alone <= 0 || m != n+1 || with <= alone {
		t.Fatalf("alone %d bytes in %d processes; with a child %d bytes in %d", alone, n, with, m)
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		return // a kernel before 4.14: no PSS
	}
	// Two sleeps share their program's pages: each one's PSS is below its
	// RSS.
	other := exec.Command("sleep", "10")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	time.Sleep(50 * time.Millisecond)
	childRSS, childPSS, _ := treeMemory([]int{cmd.Process.Pid})
	if alonePSS <= 0 || withPSS <= alonePSS || childPSS <= 0 || childPSS >= childRSS {
		t.Fatalf("PSS: alone %d, with a child %d; the child's RSS %d, PSS %d", alonePSS, withPSS, childRSS, childPSS)
	}
}

// TestPssOf reads the Pss line of smaps_rollup, and nothing else.
func TestPssOf(t *testing.T) {
	rollup := "00400000-7ffd [rollup]\nRss:  2048 kB\nPss:  1536 kB\nPss_Anon:  512 kB\n"
	if got := pssOf([]byte(rollup)); got != 1536<<10 {
		t.Errorf("pssOf = %d, want %d", got, 1536<<10)
	}
	for _, bad := range []string{"", "Rss: 2048 kB\n", "Pss: many kB\n", "Pss: 12 MB\n"} {
		if got := pssOf([]byte(bad)); got != 0 {
			t.Errorf("pssOf(%q) = %d, want 0", bad, got)
		}
	}
}

// TestPrintFleet: the table names every setup and says "—" for a time
// not measured.
func TestPrintFleet(t *testing.T) {
	var b bytes.Buffer
	printFleet(&b, &FleetReport{Clients: 5, Servers: []string{"memory"}, Rows: []FleetRow{
		{Setup: "(a) each client its own servers", RSS: 100 << 20, PSS: 80 << 20, Processes: 40, Cold: time.Second, Warm: time.Millisecond},
		{Setup: "(c) Plexus on demand, idle", RSS: 20 << 20, Daemon: 15 << 20, Processes: 6},
		{Setup: "(b) Plexus, every server eager", RSS: 50 << 20, PSS: 20 << 20, Daemon: 10 << 20, Bridges: 8 << 20, Shims: 12 << 20, Processes: 9},
	}})
	out := b.String()
	for _, want := range []string{"5 clients", "(a) each client its own servers", "100.0", "(c) Plexus on demand, idle", "—",
		"   12.0      20.0", // (b)'s shims, and its servers: what is not the daemon, a bridge or a shim
		"(b) / (a) = 0.500 by RSS, 0.250 by PSS",
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
	for deadline := time.Now().Add(30 * time.Second); shimsRSS(os.Getpid()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shim's memory is not counted")
		}
	}
}
