package daemon

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// exeText reads the executable's code mapping from /proc/self/smaps: its
// resident KiB and its VmFlags.
func exeText(t *testing.T) (rssKiB int, flags string) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		switch {
		case len(fields) >= 6 && bytes.IndexByte(fields[0], '-') > 0:
			in = string(fields[5]) == exe && string(fields[1]) == "r-xp"
		case in && len(fields) > 1 && string(fields[0]) == "Rss:":
			rssKiB, _ = strconv.Atoi(string(fields[1]))
		case in && len(fields) > 0 && string(fields[0]) == "VmFlags:":
			return rssKiB, sc.Text()
		}
	}
	t.Fatalf("no r-xp mapping of %s in /proc/self/smaps", exe)
	return 0, ""
}

// TestShedStartupPages: the code pages are unmapped (the RSS of the code
// drops), fault-around is off for them ("rr"), they are not mapped back as
// huge pages ("nh"), and the process runs on —
// its code is mapped again as it runs.
func TestShedStartupPages(t *testing.T) {
	before, _ := exeText(t)
	shedStartupPages()
	after, flags := exeText(t)
	if !strings.Contains(flags, " rr") {
		t.Errorf("fault-around still on for the code: %s", flags)
	}
	if !strings.Contains(flags, " nh") {
		t.Errorf("the code may still be mapped back in huge pages: %s", flags)
	}
	if after >= before {
		t.Errorf("code RSS %d KiB before, %d KiB after: nothing was shed", before, after)
	}
	t.Logf("code RSS %d KiB → %d KiB", before, after)
	// Still running: formatting and parsing reach code not run since.
	if n, err := strconv.Atoi(strconv.Itoa(12345)); err != nil || n != 12345 {
		t.Fatal("the process broke")
	}
}
