package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// Proc is one reading of a process's memory and CPU time.
type Proc struct {
	RSS int64         // resident set size, bytes
	CPU time.Duration // user + system time of all its threads
}

// ReadProc reads /proc/PID/status (VmRSS) and /proc/PID/stat (utime and
// stime). Only Linux has them; elsewhere it returns an error.
func ReadProc(pid int) (Proc, error) {
	var p Proc
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	if p.RSS, err = vmRSS(status); err != nil {
		return p, fmt.Errorf("process %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	if p.CPU, err = cpuTime(stat); err != nil {
		return p, fmt.Errorf("process %d: %w", pid, err)
	}
	return p, nil
}

// vmRSS finds "VmRSS:  1234 kB" in the text of /proc/PID/status.
func vmRSS(status []byte) (int64, error) { return kbLine(status, "VmRSS:") }

// kbLine finds the line "KEY  1234 kB" in the text of a /proc file (status,
// smaps_rollup), in bytes.
func kbLine(text []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), key)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", strings.TrimSuffix(key, ":"), sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return 0, fmt.Errorf("unexpected %s line %q", strings.TrimSuffix(key, ":"), sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s in the /proc file", strings.TrimSuffix(key, ":"))
}

// cpuTime returns utime+stime (fields 14 and 15) of /proc/PID/stat. The
// command name (field 2) is in parentheses and may hold spaces or ')', so
// fields are counted after the last ')'.
func cpuTime(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state), so field k is f[k-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat: %d fields", len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > 1<<40 { // beyond any real reading; keeps the sum from overflowing
			return 0, fmt.Errorf("unexpected /proc stat CPU time %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
