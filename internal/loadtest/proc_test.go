package loadtest

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestReadProcSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	before, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn some CPU so that the reading must move (ticks are 10 ms).
	deadline := time.Now().Add(100 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after.RSS < 1<<20 || after.RSS > 16<<30 {
		t.Errorf("RSS %d bytes: not a Go test process's", after.RSS)
	}
	if after.CPU <= before.CPU {
		t.Errorf("CPU time did not grow over 100ms of work: %v then %v", before.CPU, after.CPU)
	}
	if _, err := ReadProc(-1); err == nil {
		t.Error("ReadProc(-1): no error")
	}
}

func TestProcParsers(t *testing.T) {
	rss, err := vmRSS([]byte("Name:\tx\nVmPeak:\t  9 kB\nVmRSS:\t    2048 kB\nThreads: 1\n"))
	if err != nil || rss != 2048<<10 {
		t.Errorf("vmRSS = %d, %v; want %d", rss, err, 2048<<10)
	}
	for _, bad := range []string{"", "VmRSS: 12 MB\n", "VmRSS: -1 kB\n", "VmRSS: x kB\n"} {
		if _, err := vmRSS([]byte(bad)); err == nil {
			t.Errorf("vmRSS(%q): no error", bad)
		}
	}
	// A command name with spaces and a ')' must not shift the fields.
	stat := "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 5 0 100 1000 200\n"
	cpu, err := cpuTime([]byte(stat))
	if err != nil || cpu != 2*time.Second {
		t.Errorf("cpuTime = %v, %v; want 2s (200 ticks)", cpu, err)
	}
	for _, bad := range []string{"", "42 (x) S 1 2", "42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 x 50 0"} {
		if _, err := cpuTime([]byte(bad)); err == nil {
			t.Errorf("cpuTime(%q): no error", bad)
		}
	}
}

// FuzzProcParsers: /proc text is outside input; the parsers never panic and
// never return a negative reading.
func FuzzProcParsers(f *testing.F) {
	f.Add([]byte("VmRSS:\t 10 kB\n"))
	f.Add([]byte("1 (x) S 1 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1\n"))
	f.Add([]byte("1 ()) S"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if rss, err := vmRSS(b); err == nil && rss < 0 {
			t.Errorf("vmRSS: negative %d", rss)
		}
		if cpu, err := cpuTime(b); err == nil && cpu < 0 {
			t.Errorf("cpuTime: negative %v", cpu)
		}
	})
}
