//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The presets a sandboxed server runs under: the strict one (`--sandbox`,
// network none), a host:port list, and network all; each with a folder it
// may read, one it may write, and low limits.
var escapePresets = []string{"none", "hostlist", "all"}

// escapeRow is one escape tried under every preset.
type escapeRow struct {
	name, what string
	attack     string
	target     func(preset string) string
	// want is "refused" or, for a control row, "ok".
	want string
	// skip names the presets that allow this by design, and why.
	skip map[string]string
	// judge, if set, decides the verdict from the server's answer instead
	// of its own "ok"/"refused".
	judge func(got string) string
	// after, if set, checks what the attempt left outside the sandbox and
	// returns what is wrong, "" if nothing.
	after func(preset string) string
}

// unixListener serves greeting to every connection on a unix socket
// (an abstract one for "@name").
func unixListener(t *testing.T, addr, greeting string) {
	t.Helper()
	ln, err := net.Listen("unix", strings.Replace(addr, "@", "\x00", 1))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, greeting)
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

// TestSandboxEscapesAsRoot is R-SBX-5's hostile server: under every preset
// it tries each way out — the daemon's socket and every other unix socket,
// the processes outside, user namespaces, the caches other programs run
// from, Plexus's home and the user's, loopback and DNS, links, shared
// memory, setuid programs, ptrace, signals, fork and memory bombs — and a
// control row shows that the server works. Every attempt must be refused;
// the table is logged (go test -v) for docs/sandbox.md. Each row is a
// subtest named preset/row, so a break names itself.
func TestSandboxEscapesAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "the setuid row needs a root-owned setuid program, and CI runs the sandbox as root")
	t.Parallel()
	s := newSandboxEnv(t)
	sshKey := s.file(t, "home/.ssh/id_rsa", "CANARY-SSH-2b7e")
	npmEntry := s.file(t, "home/.npm/_cacache/content-v2/sha512/ab/cd/entry", "the cached package")
	readable := s.file(t, "readable/doc.txt", "readable-doc")
	readDir := filepath.Dir(readable)
	writeDir := filepath.Join(s.root, "writable")
	if err := os.MkdirAll(writeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Another program's socket, in a folder the server may read: Landlock
	// does not govern connecting to it.
	otherSock := filepath.Join(readDir, "other.sock")
	unixListener(t, otherSock, "hello from another program")
	abstract := fmt.Sprintf("@plexus-escape-%d", time.Now().UnixNano())
	unixListener(t, abstract, "hello from an abstract socket")
	tcp4 := listen(t)
	tcp6 := listenTCP6(t)
	allowed := serveHTTP(t, "hello from the allowed host")

	// Long enough to outlive the test however loaded the machine: it is
	// killed when the test ends.
	victim := exec.Command("/bin/sleep", "100000")
	if err := testenv.Start(t, victim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	vpid := strconv.Itoa(victim.Process.Pid)

	shmCanary := fmt.Sprintf("/dev/shm/plexus-canary-%d", time.Now().UnixNano())
	if err := os.WriteFile(shmCanary, []byte("CANARY-SHM-51aa"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(shmCanary) })
	shmKey := int(time.Now().UnixNano()&0x3fffffff) | 1
	shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Fatalf("shmget: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(shmID, unix.IPC_RMID, nil) })
	if seg, err := unix.SysvShmAttach(shmID, 0, 0); err != nil {
		t.Fatalf("shmat: %v", err)
	} else {
		copy(seg, "CANARY-SYSV-77c3")
		unix.SysvShmDetach(seg)
	}

	hostile := testenv.HostileServer(t)
	// A setuid-root copy of the server, where the server may run it.
	suid := filepath.Join(readDir, "suid-hostile")
	b, err := os.ReadFile(hostile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o4755); err != nil {
		t.Fatal(err)
	}

	// The race detector's runtime alone maps more than 256 MiB of private
	// memory: race-built, the server gets the default 4 GiB, and the bomb
	// asks for twice that.
	const procLimit = 64
	memLimitMb := testenv.RaceOr(256, 4096)
	srv := map[string]any{}
	for _, p := range escapePresets {
		var network any = "none"
		switch p {
		case "hostlist":
			network = []string{allowed}
		case "all":
			network = "all"
		}
		srv["esc-"+p] = map[string]any{"type": "stdio", "command": hostile,
			"sandbox": map[string]any{
				"filesystem": map[string]any{"read": []string{readDir}, "write": []string{writeDir}},
				"network":    network,
				"limits":     map[string]any{"processes": procLimit, "memoryMb": memLimitMb},
			}}
	}
	writeSettings(t, s.Env, 0, srv)
	s.StartDaemon()
	plexusCanary := filepath.Join(s.Home, "canary.txt")
	if err := os.WriteFile(plexusCanary, []byte("CANARY-PLEXUS-0c1d"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range escapePresets {
		waitState(t, s.Env, "esc-"+p, "ready", 30*time.Second)
	}
	list := tools(t, s.Env)
	tool := map[string]string{}
	for _, p := range escapePresets {
		tool[p] = toolNamed(t, list, "esc-"+p, "attempt").Name
	}
	marker := func(p string) string { return filepath.Join(s.root, "escaped-"+p) }
	noNetwork := map[string]string{"all": "network all allows it"}
	fixed := func(v string) func(string) string { return func(string) string { return v } }

	rows := []escapeRow{
		{name: "control-read", what: "control: read a file in its listed folder", attack: "read", target: fixed(readable), want: "ok"},
		{name: "control-proxy", what: "control: the allowed host:port, through the proxy", attack: "tunnel", target: fixed(allowed), want: "ok",
			skip: map[string]string{"none": "no network", "all": "no proxy"}},
		{name: "control-loopback", what: "control: a loopback port", attack: "connect", target: fixed(tcp4), want: "ok",
			skip: map[string]string{"none": "no network", "hostlist": "only through the proxy"}},
		{name: "daemon-socket", what: "add an unsandboxed server through the daemon's socket ($PLEXUS_HOME/plexus.sock)", attack: "daemon",
			target: func(p string) string { return filepath.Join(s.Home, "plexus.sock") + "|" + marker(p) },
			after: func(p string) string {
				if _, err := os.Stat(marker(p)); err == nil {
					return "the unsandboxed server's command ran: " + marker(p) + " exists"
				}
				return ""
			}},
		{name: "daemon-socket-relative", what: "the same through ../../plexus.sock from its working directory", attack: "daemon",
			target: func(p string) string { return "../../plexus.sock|" + marker(p) + "-rel" },
			after: func(p string) string {
				if _, err := os.Stat(marker(p) + "-rel"); err == nil {
					return "the unsandboxed server's command ran"
				}
				return ""
			}},
		{name: "unix-pathname", what: "connect to another program's unix socket in a folder it may read", attack: "unix", target: fixed(otherSock)},
		{name: "unix-abstract", what: "connect to an abstract unix socket outside", attack: "unix", target: fixed(abstract)},
		{name: "processes", what: "list the processes and find the daemon's", attack: "ps", target: fixed("--listen")},
		{name: "daemon-environ", what: "read the daemon's environment (/proc/PID/environ)", attack: "read",
			target: fixed(fmt.Sprintf("/proc/%d/environ", s.DaemonPID()))},
		{name: "memory", what: "read another process's memory (/proc/PID/mem, process_vm_readv)", attack: "mem", target: fixed(vpid)},
		{name: "ptrace", what: "ptrace a process outside", attack: "ptrace", target: fixed(vpid)},
		{name: "signal", what: "SIGKILL a process outside", attack: "kill", target: fixed(vpid),
			after: func(string) string {
				if !alive(victim.Process.Pid) {
					return "the process outside was killed"
				}
				return ""
			}},
		{name: "userns-clone", what: "make a user namespace (clone)", attack: "userns", target: fixed("")},
		{name: "userns-unshare", what: "make a user namespace (unshare --user)", attack: "unshare", target: fixed("")},
		{name: "home-ssh", what: "read ~/.ssh/id_rsa", attack: "read", target: fixed(sshKey)},
		{name: "plexus-home", what: "read a file in Plexus's home", attack: "read", target: fixed(plexusCanary)},
		{name: "plexus-creds", what: "read Plexus's creds.json", attack: "read", target: fixed(filepath.Join(s.Home, "creds.json"))},
		{name: "npm-cache", what: "poison the user's npm cache (~/.npm), which a plain npx runs from", attack: "write", target: fixed(npmEntry),
			after: func(string) string {
				if b, _ := os.ReadFile(npmEntry); string(b) != "the cached package" {
					return fmt.Sprintf("the user's npm cache was changed: %q", b)
				}
				return ""
			}},
		{name: "cwd", what: "run inside Plexus's home (its working directory)", attack: "cwd", target: fixed(""),
			judge: func(got string) string {
				if dir, ok := strings.CutPrefix(got, "ok: "); ok && !inFolder(dir, s.Home) {
					return "refused: runs in " + dir + ", outside Plexus's home"
				}
				return got
			}},
		{name: "loopback-ipv4", what: "connect to a port on 127.0.0.1", attack: "connect", target: fixed(tcp4), skip: noNetwork},
		{name: "loopback-ipv6", what: "connect to a port on [::1]", attack: "connect", target: fixed(tcp6), skip: noNetwork},
		{name: "dns", what: "resolve a host name", attack: "resolve", target: fixed("example.com"), skip: noNetwork},
		{name: "symlink-out", what: "a symlink in its write folder to ~/.ssh/id_rsa", attack: "symlink", target: fixed(writeDir + "|" + sshKey)},
		{name: "hardlink-out", what: "a hard link in its write folder to ~/.ssh/id_rsa", attack: "hardlink", target: fixed(writeDir + "|" + sshKey)},
		{name: "dev-shm", what: "read a file another program put in /dev/shm", attack: "read", target: fixed(shmCanary)},
		{name: "sysv-shm", what: "read another program's System V shared memory", attack: "sysvshm", target: fixed(strconv.Itoa(shmKey))},
		{name: "setuid", what: "gain privileges from a setuid-root program", attack: "setuid", target: fixed(suid)},
		{name: "fork-bomb", what: fmt.Sprintf("start 100 processes (limit %d)", procLimit), attack: "forks", target: fixed("100")},
		{name: "memory-bomb", what: fmt.Sprintf("allocate %d MiB (limit %d MiB)", 4*memLimitMb, memLimitMb), attack: "alloc", target: fixed(strconv.Itoa(4 * memLimitMb))},
	}
	if tcp6 == "" {
		rows = slicesDelete(rows, "loopback-ipv6")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		rows = slicesDelete(rows, "userns-unshare")
	}

	c := client.New(s.Home)
	var mu sync.Mutex
	cells := map[string]string{} // preset/row → the table's cell
	t.Run("presets", func(t *testing.T) {
		for _, p := range escapePresets {
			t.Run(p, func(t *testing.T) {
				t.Parallel()
				for _, r := range rows {
					t.Run(r.name, func(t *testing.T) {
						cell := escapeAttempt(t, c, tool[p], p, r)
						mu.Lock()
						cells[p+"/"+r.name] = cell
						mu.Unlock()
					})
				}
			})
		}
	})

	var table strings.Builder
	fmt.Fprintf(&table, "| attempt | %s |\n|---|%s\n", strings.Join(escapePresets, " | "), strings.Repeat("---|", len(escapePresets)))
	for _, r := range rows {
		fmt.Fprintf(&table, "| %s |", r.what)
		for _, p := range escapePresets {
			fmt.Fprintf(&table, " %s |", cells[p+"/"+r.name])
		}
		table.WriteString("\n")
	}
	t.Logf("hostile server, every preset:\n%s", table.String())

	for name := range servers(t, s.Env) {
		if strings.HasPrefix(name, "escaped") {
			t.Errorf("the daemon holds a server added from inside a sandbox: %s", name)
		}
	}
	for _, c := range []string{"CANARY-SSH", "CANARY-PLEXUS", "CANARY-SHM", "CANARY-SYSV"} {
		if strings.Contains(table.String(), c) {
			t.Errorf("a canary leaked into the table: %s", c)
		}
	}
}

// escapeAttempt runs one row under one preset and returns its cell: the
// verdict and, shortened, what the server saw.
func escapeAttempt(t *testing.T, c *client.Client, tool, preset string, r escapeRow) string {
	if why, ok := r.skip[preset]; ok {
		return "— (" + why + ")"
	}
	args, _ := json.Marshal(map[string]string{"attack": r.attack, "target": r.target(preset)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.Call(ctx, apitype.CallRequest{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: the call failed: %v", r.what, err)
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil || len(out.Content) == 0 {
		t.Fatalf("%s: result %s", r.what, res.Result)
	}
	got := strings.TrimSpace(out.Content[0].Text)
	if r.judge != nil {
		got = r.judge(got)
	}
	want := r.want
	if want == "" {
		want = "refused"
	}
	verdict, detail, _ := strings.Cut(got, ": ")
	if verdict != want {
		t.Errorf("%s (%s): %s, want %s", r.what, preset, got, want)
	}
	if r.after != nil {
		if problem := r.after(preset); problem != "" {
			t.Errorf("%s (%s): %s", r.what, preset, problem)
			verdict = "ESCAPED"
		}
	}
	detail = strings.Join(strings.Fields(strings.ReplaceAll(detail, "|", "/")), " ")
	if len(detail) > 90 {
		detail = detail[:87] + "…"
	}
	return verdict + ": " + detail
}

// slicesDelete drops the row named name.
func slicesDelete(rows []escapeRow, name string) []escapeRow {
	var out []escapeRow
	for _, r := range rows {
		if r.name != name {
			out = append(out, r)
		}
	}
	return out
}

// listenTCP6 serves TCP on [::1], closing each connection, and returns
// its address; "" where the machine has no IPv6 loopback.
func listenTCP6(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Logf("no IPv6 loopback (%v): the [::1] row is left out", err)
		return ""
	}
	return serve(t, ln, "")
}
