package localapi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOwnChildIsRefused: a process the serving process started — here the
// test binary re-run as a client, as a server of the daemon would be —
// is refused even with the token and the daemon's uid.
func TestOwnChildIsRefused(t *testing.T) {
	sock, _ := serve(t)
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PLEXUS_LOCALAPI_PROBE="+sock)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "403 ") || !strings.Contains(string(out), "a process the daemon started") {
		t.Fatalf("the daemon's own child got: %s", out)
	}
}

// fakeProc is a /proc of made-up processes: pid → parent, and its pid and
// user namespaces ("" for one the daemon may not read).
type fakeProc map[int]struct {
	parent   int
	pid, usr string
}

func (f fakeProc) root(t *testing.T) string {
	root := t.TempDir()
	for pid, p := range f {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o700); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (a) b) c) S %d %d 0 0", pid, p.parent, pid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600); err != nil {
			t.Fatal(err)
		}
		for kind, l := range map[string]string{"pid": p.pid, "user": p.usr} {
			if l != "" {
				if err := os.Symlink(l, filepath.Join(dir, "ns", kind)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return root
}

// TestCheckProcess: the verdicts on made-up processes beside the test's
// own (standing for the daemon), whose namespaces are the real ones.
func TestCheckProcess(t *testing.T) {
	self := selfProc()
	if self == nil {
		t.Skip("no /proc of this PID namespace here")
	}
	me := os.Getpid()
	pidNS, userNS := self["pid"], self["user"]
	tree := fakeProc{
		100: {1, pidNS, userNS},      // a program of the user's session
		101: {me, pidNS, userNS},     // the daemon's child (a server)
		102: {101, pidNS, userNS},    // its grandchild (what a server ran)
		103: {1, "pid:[1]", userNS},  // a PID namespace of its own
		104: {1, pidNS, "user:[1]"},  // a user namespace of its own
		105: {1, "", ""},             // namespaces the daemon may not read
		106: {107, pidNS, userNS},    // a loop of parents
		107: {106, pidNS, userNS},    //
		108: {999, pidNS, userNS},    // a parent that is gone
		109: {0, pidNS, userNS},      // a parent outside the namespace
		110: {me, "pid:[1]", userNS}, // a sandboxed server: both
	}
	root := tree.root(t)
	for _, tc := range []struct {
		pid     int
		sameUID bool
		want    string // "" admitted, else part of the refusal
	}{
		{100, true, ""},
		{109, true, ""},
		{me, true, ""},
		{101, true, "a process the daemon started"},
		{102, true, "a process the daemon started"},
		{103, true, "another pid namespace"},
		{104, true, "another user namespace"},
		{105, true, "cannot be checked"},
		{105, false, ""}, // root's process: root may do anything anyway
		{106, true, "cannot be checked"},
		{108, true, "cannot be checked"},
		{110, true, "another pid namespace"},
		{0, true, "outside the daemon's PID namespace"},
		{424242, true, "cannot be checked"},
	} {
		err := checkProcess(root, tc.pid, tc.sameUID)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("pid %d: refused (%v), want admitted", tc.pid, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("pid %d: %v, want refused: %s", tc.pid, err, tc.want)
		}
	}
}

// FuzzStatParent: a process names itself (its comm, inside the stat
// line) as it likes; whatever it picks, the parent read is the field
// after the state, or an error.
func FuzzStatParent(f *testing.F) {
	f.Add("1 (init) S 0 1 1", "x")
	f.Add("42 (a) S 7 (b) S 9", ") S 9999 (")
	f.Fuzz(func(t *testing.T, rest, comm string) {
		line := "42 (" + comm + ") S 4242 " + rest
		got, err := statParent([]byte(line))
		if strings.Contains(rest, ")") {
			return // the name's end is then in rest: another line
		}
		if err != nil || got != 4242 {
			t.Fatalf("statParent(%q) = %d, %v; want 4242", line, got, err)
		}
	})
}
