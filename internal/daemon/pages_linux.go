package daemon

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// shedStartupPages unmaps the pages of the daemon's own executable that
// are mapped but not written — code and read-only data — and turns off the
// kernel's fault-around for them. One binary holds the daemon, the CLI,
// the terminal UI and the web page, and starting it touches code of all of
// them (package initialisation), each touch mapping 64 KiB around it: most
// of the executable ends up counted in the daemon's RSS although it never
// runs again. Where the page cache holds the executable in large folios
// (ext4 does, on recent kernels), one touch can even map 2 MiB at once as
// a huge page: MADV_NOHUGEPAGE stops that, so that what comes back is
// what runs. The pages stay in the page cache; the ones the daemon does
// use are mapped again, one by one, when it next runs them. Mappings with
// written (anonymous) pages are left alone: dropping those would lose data.
func shedStartupPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	type mapping struct {
		start, end uintptr
		anon       bool
	}
	var maps []mapping
	var cur *mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		fields := bytes.Fields(line)
		if len(fields) >= 6 && bytes.IndexByte(fields[0], '-') > 0 && !bytes.HasSuffix(fields[0], []byte(":")) {
			cur = nil
			perms := fields[1]
			if string(fields[5]) != exe || perms[1] == 'w' || perms[3] != 'p' {
				continue
			}
			lo, hi, _ := bytes.Cut(fields[0], []byte("-"))
			s, err1 := strconv.ParseUint(string(lo), 16, 64)
			e, err2 := strconv.ParseUint(string(hi), 16, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			maps = append(maps, mapping{start: uintptr(s), end: uintptr(e)})
			cur = &maps[len(maps)-1]
			continue
		}
		if cur != nil && bytes.HasPrefix(line, []byte("Anonymous:")) {
			kb, _ := strconv.Atoi(string(bytes.Fields(line)[1]))
			cur.anon = kb != 0
		}
	}
	if sc.Err() != nil {
		return
	}
	for _, m := range maps {
		if m.anon {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_RANDOM)
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_NOHUGEPAGE)
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}
