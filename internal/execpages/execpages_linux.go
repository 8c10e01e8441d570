package execpages

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Shed unmaps the pages of the process's own executable that are mapped
// but not written — code and read-only data — and turns off the kernel's
// fault-around for them. One binary holds the daemon, the CLI, the
// terminal UI, the web page, the `plexus mcp` bridge and the lifeline
// shim, and starting it touches code of all of them (package
// initialisation), each touch mapping 64 KiB around it: most of the
// executable ends up counted in the process's RSS although it never runs
// again. Where the page cache holds the executable in large folios
// (ext4 does, on recent kernels), one touch can even map 2 MiB at once as
// a huge page: MADV_NOHUGEPAGE stops that, so that what comes back is
// what runs. The pages stay in the page cache; the ones the process does
// use are mapped again when it next runs them — one page at a time, or a
// whole folio where the page cache holds the file in large folios (which
// is why how much this gives back depends on how the executable was
// written: docs/performance.md).
func Shed() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	shedFilePages(exe)
}

// shedFilePages does the work of Shed for the process's
// mappings of the file at path (as /proc/self/exe or smaps name it).
// Writable mappings are left alone, and so are read-only ones holding
// written (anonymous) pages — say, made read-only again after a write:
// dropping those would put the file's bytes back in place of what was
// written.
func shedFilePages(path string) {
	for _, m := range fileMappings(path) {
		if m.written {
			continue
		}
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_RANDOM)
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_NOHUGEPAGE)
		unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}

// fileMapping is one private, non-writable mapping of a file.
type fileMapping struct {
	start, end uintptr
	written    bool // it holds anonymous pages
}

// fileMappings reads /proc/self/smaps for the private, non-writable
// mappings of the file at path; nil if it cannot be read whole.
func fileMappings(path string) []fileMapping {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var maps []fileMapping
	cur := -1 // index in maps of the mapping whose lines follow, or -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if rng, perms, name, ok := smapsHeader(line); ok {
			cur = -1
			if name != path || len(perms) < 4 || perms[1] == 'w' || perms[3] != 'p' {
				continue
			}
			lo, hi, _ := bytes.Cut(rng, []byte("-"))
			s, err1 := strconv.ParseUint(string(lo), 16, 64)
			e, err2 := strconv.ParseUint(string(hi), 16, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			maps = append(maps, fileMapping{start: uintptr(s), end: uintptr(e)})
			cur = len(maps) - 1
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("Anonymous:")); ok && cur >= 0 {
			kb, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
			maps[cur].written = string(kb) != "0"
		}
	}
	if sc.Err() != nil {
		return nil
	}
	return maps
}

// smapsHeader splits a mapping's first line in /proc/self/smaps
// ("start-end perms offset dev inode name"): ok is false for the lines of
// its details ("Rss: …"). The name is the rest of the line after the
// inode, so that it keeps its spaces, and " (deleted)" when the file was
// replaced since — as /proc/self/exe gives it then.
func smapsHeader(line []byte) (rng, perms []byte, name string, ok bool) {
	rest := line
	var fields [5][]byte
	for i := range fields {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		fields[i], rest = rest[:end], rest[end:]
	}
	if bytes.IndexByte(fields[0], '-') <= 0 || bytes.HasSuffix(fields[0], []byte(":")) || len(fields[4]) == 0 {
		return nil, nil, "", false
	}
	return fields[0], fields[1], string(bytes.TrimSpace(rest)), true
}
