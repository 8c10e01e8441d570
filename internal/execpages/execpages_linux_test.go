package execpages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mappingAt reads the mapping that starts at addr from /proc/self/smaps:
// its resident and anonymous KiB and its VmFlags.
func mappingAt(t *testing.T, addr uintptr) (rssKiB, anonKiB int, flags string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%08x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, _, _, ok := smapsHeader(sc.Bytes()); ok {
			in = strings.HasPrefix(line, start)
			continue
		}
		if !in {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch {
		case fields[0] == "Rss:":
			rssKiB, _ = strconv.Atoi(fields[1])
		case fields[0] == "Anonymous:":
			anonKiB, _ = strconv.Atoi(fields[1])
		case fields[0] == "VmFlags:":
			return rssKiB, anonKiB, line
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0, 0, ""
}

// mapFile maps the file read-only or read-write (both private) and
// returns the mapping's bytes, unmapped when the test ends.
func mapFile(t *testing.T, path string, prot int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), prot, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

// readAll touches every page of b and returns the sum of its bytes.
func readAll(b []byte) (sum int) {
	for i := 0; i < len(b); i += os.Getpagesize() {
		sum += int(b[i])
	}
	return sum
}

// addr is where b starts.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// TestShedFilePages: of a file's mappings, a read-only one is unmapped
// (its RSS drops to nothing while untouched), with fault-around and huge
// pages off ("rr", "nh"), and reads the file's bytes again after; a
// read-only one holding a written page, and a writable one, are left
// alone — the written byte is still there, not the file's.
func TestShedFilePages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pages")
	const size = 4 << 20
	if err := os.WriteFile(path, bytes.Repeat([]byte{'a'}, size), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := mapFile(t, path, unix.PROT_READ)
	written := mapFile(t, path, unix.PROT_READ|unix.PROT_WRITE)
	written[0] = 'X'
	if err := unix.Mprotect(written, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	writable := mapFile(t, path, unix.PROT_READ|unix.PROT_WRITE)
	for _, b := range [][]byte{clean, written, writable} {
		readAll(b)
	}
	rss, _, _ := mappingAt(t, addr(clean))
	if rss == 0 {
		t.Fatal("the read-only mapping has no resident pages after reading all of it")
	}
	_, anon, _ := mappingAt(t, addr(written))
	if anon == 0 {
		t.Fatal("the written mapping holds no anonymous page")
	}
	writableBefore, _, _ := mappingAt(t, addr(writable))

	shedFilePages(path)

	after, _, flags := mappingAt(t, addr(clean))
	if after != 0 {
		t.Errorf("read-only mapping: %d KiB resident before, %d KiB after: not unmapped", rss, after)
	}
	if !strings.Contains(flags, " rr") || !strings.Contains(flags, " nh") {
		t.Errorf("read-only mapping: fault-around or huge pages still on: %s", flags)
	}
	if got := readAll(clean); got != 'a'*size/os.Getpagesize() {
		t.Errorf("read-only mapping reads %d after the shed, not the file's bytes", got)
	}
	if written[0] != 'X' {
		t.Errorf("the written page was dropped: it reads %q, the file's byte", written[0])
	}
	if _, _, flags := mappingAt(t, addr(written)); strings.Contains(flags, " rr") {
		t.Errorf("the mapping with a written page was advised: %s", flags)
	}
	if rss, _, flags := mappingAt(t, addr(writable)); rss != writableBefore || strings.Contains(flags, " rr") {
		t.Errorf("writable mapping: %d KiB resident before, %d after (%s): it was shed", writableBefore, rss, flags)
	}
}

// TestShed: the process's own code and read-only data are
// found and advised (fault-around off, "rr"; no huge pages, "nh"), and the
// process runs on — its code is mapped again as it runs. How much of the code's
// RSS stays unmapped is not checked here: where the page cache holds the
// executable in large folios, running any code of a folio maps the whole
// folio back, so what the next read of smaps sees depends on how the test
// binary was written (docs/performance.md); TestShedFilePages checks the
// unmapping on a mapping nothing touches.
func TestShed(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	Shed()
	maps := fileMappings(exe)
	if len(maps) == 0 {
		t.Fatalf("no read-only mapping of %s in /proc/self/smaps", exe)
	}
	for _, m := range maps {
		if m.written {
			continue
		}
		rss, _, flags := mappingAt(t, m.start)
		if !strings.Contains(flags, " rr") {
			t.Errorf("%#x: fault-around still on: %s", m.start, flags)
		}
		if !strings.Contains(flags, " nh") {
			t.Errorf("%#x: may still be mapped back in huge pages: %s", m.start, flags)
		}
		t.Logf("%#x-%#x: %d KiB resident after the shed", m.start, m.end, rss)
	}
	// Still running: formatting and parsing reach code not run since.
	if n, err := strconv.Atoi(strconv.Itoa(12345)); err != nil || n != 12345 {
		t.Fatal("the process broke")
	}
}

// TestSmapsHeader: a mapping's first line gives its range, permissions
// and whole name (spaces and " (deleted)" kept); a detail line is not
// one.
func TestSmapsHeader(t *testing.T) {
	for _, tc := range []struct {
		line, rng, perms, name string
		ok                     bool
	}{
		{"00400000-004b2000 r-xp 00000000 fe:00 9994957                            /work/a b/plexus", "00400000-004b2000", "r-xp", "/work/a b/plexus", true},
		{"00400000-004b2000 r-xp 00000000 fe:00 9994957 /usr/bin/plexus (deleted)", "00400000-004b2000", "r-xp", "/usr/bin/plexus (deleted)", true},
		{"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 ", "7f0000000000-7f0000021000", "rw-p", "", true},
		{"Rss:                 712 kB", "", "", "", false},
		{"VmFlags: rd ex mr mw me", "", "", "", false},
		{"", "", "", "", false},
	} {
		rng, perms, name, ok := smapsHeader([]byte(tc.line))
		if ok != tc.ok || string(rng) != tc.rng || string(perms) != tc.perms || name != tc.name {
			t.Errorf("smapsHeader(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.line, rng, perms, name, ok, tc.rng, tc.perms, tc.name, tc.ok)
		}
	}
}
