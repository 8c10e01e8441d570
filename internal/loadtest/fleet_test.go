package loadtest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// holdMiB, set in the environment of a copy of this test binary, makes
// it a child that holds that many MiB of memory of its own (touched, so
// resident and private), says "ready" and waits for its stdin to close.
const holdMiB = "PLEXUS_TEST_HOLD_MIB"

func init() {
	if mib, err := strconv.Atoi(os.Getenv(holdMiB)); err == nil && mib > 0 {
		b := make([]byte, mib<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		os.Stdout.WriteString("ready\n")
		io.Copy(io.Discard, os.Stdin)
		runtime.KeepAlive(b)
		os.Exit(0)
	}
}

// TestTreeMemoryCountsDescendants: a process's tree is itself and its
// children, each counted once, with their memory; a page the child shares
// with others counts in full in its RSS and in part in its PSS.
func TestTreeMemoryCountsDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	_, hasPSS := os.Stat("/proc/self/smaps_rollup")
	alone, alonePSS, n := treeMemory([]int{os.Getpid()})

	// A child holding 64 MiB of its own: the tree grows by about that
	// much, far beyond what this process's own memory moves by between
	// two readings (a collection, a page shared anew: CI saw its PSS drop
	// by 0.6 MiB while a child of 0.5 MiB was added).
	const held = 64 << 20
	big := exec.Command(os.Args[0])
	big.Env = append(os.Environ(), holdMiB+"=64")
	stdin, err := big.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := big.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); big.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the child holding memory said %q (%v)", line, err)
	}
	with, withPSS, m := treeMemory([]int{os.Getpid()}) // the child as a descendant
	if alone <= 0 || m != n+1 || with-alone < held/2 {
		t.Fatalf("alone %d bytes in %d processes; with a child holding %d: %d bytes in %d", alone, n, held, with, m)
	}
	if hasPSS != nil {
		return // a kernel before 4.14: no PSS
	}
	if alonePSS <= 0 || withPSS-alonePSS < held/2 {
		t.Fatalf("PSS: alone %d, with a child holding %d: %d", alonePSS, held, withPSS)
	}

	// Two sleeps share their program's pages: each one's PSS is below its
	// RSS (once both have mapped them).
	var sleeps [2]*exec.Cmd
	for i := range sleeps {
		sleeps[i] = exec.Command("sleep", "60")
		if err := sleeps[i].Start(); err != nil {
			t.Fatal(err)
		}
		c := sleeps[i]
		defer func() { c.Process.Kill(); c.Wait() }()
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		childRSS, childPSS, _ := treeMemory([]int{sleeps[0].Process.Pid})
		if childPSS > 0 && childPSS < childRSS {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("PSS of a sleep beside another: RSS %d, PSS %d, want 0 < PSS < RSS", childRSS, childPSS)
		}
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
