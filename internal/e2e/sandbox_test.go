package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/sandbox"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// requireSandbox fails (not skips) where the kernel cannot sandbox: CI is
// Linux, and a sandbox that silently does not run would pass every test.
func requireSandbox(t testing.TB) {
	t.Helper()
	p := &sandbox.Policy{Network: sandbox.Network{Mode: sandbox.NetworkList}}
	if m := p.Missing(sandbox.Detect()); len(m) > 0 {
		t.Fatalf("this kernel cannot run the sandbox tests: %s", strings.Join(m, "; "))
	}
}

// sandboxEnv is a daemon whose HOME is a temporary folder with canaries.
type sandboxEnv struct {
	*testenv.Env
	root, home string
}

func newSandboxEnv(t *testing.T) *sandboxEnv {
	t.Helper()
	requireSandbox(t)
	e := testenv.New(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	e.ExtraEnv = []string{"HOME=" + home}
	s := &sandboxEnv{Env: e, root: root, home: home}
	return s
}

// file writes a canary file and returns its path.
func (s *sandboxEnv) file(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(s.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// listen serves TCP on a loopback port, answering each connection with
// nothing, and returns its address.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, "")
}

// serve accepts on ln until the test ends, writing greeting (if any) to
// each connection before it closes it, and returns ln's address.
func serve(t *testing.T, ln net.Listener, greeting string) string {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if greeting != "" {
				io.WriteString(c, greeting+"\n")
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// serveHTTP serves body over HTTP on a loopback port and returns the
// address.
func serveHTTP(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// udpSink counts the datagrams sent to a loopback UDP port.
type udpSink struct {
	addr string
	got  atomic.Int64
}

func listenUDP(t *testing.T) *udpSink {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	s := &udpSink{addr: pc.LocalAddr().String()}
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			s.got.Add(1)
		}
	}()
	return s
}

// attempt calls the hostile server's attempt tool.
func attempt(t *testing.T, e *testenv.Env, tool, attack, target string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"attack": attack, "target": target})
	return strings.TrimSpace(e.MustRun("call", tool, string(args)))
}

// procPIDs lists the machine's processes.
func procPIDs() []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err == nil {
			pids = append(pids, d.Name())
		}
	}
	return pids
}

// descendants counts the processes below pid, zombies included, from
// /proc/PID/stat ("pid (comm) state ppid ...").
func descendants(pid int) int {
	parent := map[int]int{}
	for _, p := range procPIDs() {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			continue
		}
		child, _ := strconv.Atoi(p)
		parent[child], _ = strconv.Atoi(f[1])
	}
	n := 0
	for child := range parent {
		for p, hops := parent[child], 0; p != 0 && hops < 4096; p, hops = parent[p], hops+1 {
			if p == pid {
				n++
				break
			}
		}
	}
	return n
}

// procsWith counts the processes whose command line holds token.
func procsWith(token string) int {
	n := 0
	for _, pid := range procPIDs() {
		b, err := os.ReadFile("/proc/" + pid + "/cmdline")
		if err == nil && strings.Contains(string(b), token) {
			n++
		}
	}
	return n
}

func waitProcs(t *testing.T, token string, want func(int) bool, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		n := procsWith(token)
		if want(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The hostile server tries each attack; the table of attempt, expected and
// observed is logged (go test -v) for docs/sandbox.md.
func TestSandboxHostileServer(t *testing.T) {
	t.Parallel()
	s := newSandboxEnv(t)
	homeCanary := s.file(t, "home/.ssh/id_rsa", "CANARY-HOME-7d1f")
	unlisted := s.file(t, "unlisted/secret.txt", "CANARY-UNLISTED-93ab")
	readable := s.file(t, "readable/doc.txt", "readable-doc")
	writable := filepath.Join(s.root, "writable")
	if err := os.MkdirAll(writable, 0o700); err != nil {
		t.Fatal(err)
	}
	s.StartDaemon()
	plexusCanary := filepath.Join(s.Home, "canary.txt")
	if err := os.WriteFile(plexusCanary, []byte("CANARY-PLEXUS-51c2"), 0o600); err != nil {
		t.Fatal(err)
	}
	allowed, denied := serveHTTP(t, "hello from the allowed host"), listen(t)
	_, allowedPort, _ := net.SplitHostPort(allowed)
	udp := listenUDP(t)
	hostile := testenv.HostileServer(t)
	s.MustRun("add", "hostile", "--sandbox", "--allow-read", filepath.Dir(readable), "--allow-write", writable,
		"--allow-net", allowed, "--", hostile)
	s.MustRun("add", "offline", "--sandbox", "--", hostile)
	list := tools(t, s.Env)
	tool := toolNamed(t, list, "hostile", "attempt").Name
	offline := toolNamed(t, list, "offline", "attempt").Name

	token := fmt.Sprintf("escape-%d", time.Now().UnixNano())
	rows := []struct {
		what, tool, attack, target, want string
	}{
		{"read a canary in the home (~/.ssh/id_rsa)", tool, "read", homeCanary, "refused"},
		{"read a canary in Plexus's home", tool, "read", plexusCanary, "refused"},
		{"read Plexus's creds.json", tool, "read", filepath.Join(s.Home, "creds.json"), "refused"},
		{"read a file in a folder not listed", tool, "read", unlisted, "refused"},
		{"read a file in a listed folder", tool, "read", readable, "ok"},
		{"write outside the write list", tool, "write", filepath.Join(s.root, "unlisted", "new.txt"), "refused"},
		{"write into a read-only listed folder", tool, "write", filepath.Join(filepath.Dir(readable), "new.txt"), "refused"},
		{"write into a listed write folder", tool, "write", filepath.Join(writable, "new.txt"), "ok"},
		{"connect to a loopback port not allowed", tool, "connect", denied, "refused"},
		{"connect to the allowed host:port directly, not through the proxy", tool, "connect", allowed, "refused"},
		{"HTTP CONNECT through the proxy to the allowed host:port", tool, "tunnel", allowed, "ok"},
		{"plain HTTP through the proxy to the allowed host:port", tool, "fetch", "http://" + allowed + "/", "ok"},
		{"through the proxy: the allowed port by another name (localhost)", tool, "tunnel", "localhost:" + allowedPort, "refused"},
		{"through the proxy: the allowed port on another address (127.0.0.2)", tool, "tunnel", "127.0.0.2:" + allowedPort, "refused"},
		{"through the proxy: a loopback port not allowed", tool, "tunnel", denied, "refused"},
		{"through the proxy: a public host not allowed", tool, "fetch", "http://evil.example/", "refused"},
		{"curl (honours the proxy variables) to the allowed host:port", tool, "curl", "http://" + allowed + "/", "ok"},
		{"curl --proxytunnel (CONNECT) to the allowed host:port", tool, "curl", "-p http://" + allowed + "/", "ok"},
		{"curl to the allowed port by another name (localhost)", tool, "curl", "-p http://localhost:" + allowedPort + "/", "refused"},
		{"host list: send UDP to a loopback listener outside", tool, "udp", udp.addr, "refused"},
		{"host list: resolve a host name (DNS)", tool, "resolve", "example.com", "refused"},
		{"host list: open a raw socket", tool, "raw", "", "refused"},
		{"network none: send UDP to a loopback listener outside", offline, "udp", udp.addr, "refused"},
		{"network none: resolve a host name", offline, "resolve", "example.com", "refused"},
		{"network none: connect to loopback", offline, "connect", allowed, "refused"},
		{"network none: connect to a public address", offline, "connect", "1.1.1.1:443", "refused"},
		{"read the shim's environment (/proc/1/environ)", tool, "read", "/proc/1/environ", "refused"},
		{"network none: npx is told to run from its cache", offline, "env", "npm_config_offline", "ok"},
		{"write into its temporary folder ($TMPDIR)", tool, "write", filepath.Join(s.Home+"-sandbox", "hostile", "tmp", "t.txt"), "ok"},
		{"ptrace a sibling process", tool, "ptrace-sibling", "", "refused"},
		{"escape by setsid", tool, "setsid", token + "-setsid", "contained"},
		{"escape by double fork", tool, "doublefork", token + "-double", "contained"},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| attempt | expected | observed |\n|---|---|---|\n")
	for _, r := range rows {
		got := attempt(t, s.Env, r.tool, r.attack, r.target)
		observed := strings.SplitN(got, ":", 2)[0]
		switch r.want {
		case "contained":
			if observed != "ok" {
				t.Errorf("%s: %s, want the process started (then contained)", r.what, got)
			}
		default:
			if observed != r.want {
				t.Errorf("%s: %s, want %s", r.what, got, r.want)
			}
		}
		for _, c := range []string{"CANARY-HOME", "CANARY-UNLISTED", "CANARY-PLEXUS"} {
			if strings.Contains(got, c) {
				t.Errorf("%s: the canary leaked: %s", r.what, got)
			}
		}
		if r.want == "contained" {
			observed = "started; ended with the server (below)"
		} else {
			observed = got
		}
		fmt.Fprintf(&table, "| %s | %s | %s |\n", r.what, r.want, strings.ReplaceAll(observed, "|", "/"))
	}
	t.Logf("hostile server table:\n%s", table.String())
	if got := attempt(t, s.Env, tool, "tunnel", allowed); got != "ok: hello from the allowed host" {
		t.Errorf("through the proxy to the allowed host: %s", got)
	}
	time.Sleep(200 * time.Millisecond) // a datagram in flight would have arrived
	if n := udp.got.Load(); n != 0 {
		t.Errorf("the UDP listener outside the sandbox got %d datagrams", n)
	}
	if got := attempt(t, s.Env, tool, "env", "TMPDIR"); got != "ok: "+filepath.Join(s.Home+"-sandbox", "hostile", "tmp") {
		t.Errorf("TMPDIR in the sandbox: %s, want its private temporary folder", got)
	}

	// The denial shows in the server's log as Plexus's own line.
	logs := s.MustRun("logs", "hostile")
	mustContain(t, "logs", logs, "sandbox: denied access to "+homeCanary)
	mustContain(t, "logs", logs, "sandbox: denied connect to localhost:"+allowedPort)
	mustContain(t, "logs", logs, "sandbox: denied connect to evil.example:80")

	// The escapees run until the server ends, then end with it: the
	// sandbox's PID namespace ends with its first process.
	for _, tk := range []string{token + "-setsid", token + "-double"} {
		if n := procsWith(tk); n != 1 {
			t.Errorf("%s: %d processes, want the 1 escapee running", tk, n)
		}
	}
	s.MustRun("rm", "hostile")
	for _, tk := range []string{token + "-setsid", token + "-double"} {
		if n := waitProcs(t, tk, func(n int) bool { return n == 0 }, 10*time.Second); n != 0 {
			t.Errorf("%s: %d processes outlived the sandboxed server", tk, n)
		}
	}
}

// A fork bomb in a sandbox stops at its process limit, the daemon and its
// other servers go on working, and stopping the server ends the bomb.
func TestSandboxForkBomb(t *testing.T) {
	// Not parallel: its fork bomb would load every test beside it.
	s := newSandboxEnv(t)
	readable := s.file(t, "readable/doc.txt", "still-readable")
	hostile := testenv.HostileServer(t)
	// A low limit: the machine running the tests is shared.
	const limit = 64
	writeSettings(t, s.Env, 0, map[string]any{
		"bomb": map[string]any{"type": "stdio", "command": hostile,
			"sandbox": map[string]any{"limits": map[string]any{"processes": limit}}},
		"calm": map[string]any{"type": "stdio", "command": hostile,
			"sandbox": map[string]any{"filesystem": map[string]any{"read": []string{filepath.Dir(readable)}}}},
	})
	s.StartDaemon()
	waitState(t, s.Env, "bomb", "ready", 20*time.Second)
	waitState(t, s.Env, "calm", "ready", 20*time.Second)
	list := tools(t, s.Env)
	bomb := toolNamed(t, list, "bomb", "attempt").Name
	calm := toolNamed(t, list, "calm", "attempt").Name

	token := fmt.Sprintf("bomb-%d", time.Now().UnixNano())
	// The machine is shared: should the limit fail, the bomb's namespace is
	// ended (SIGKILL to its first process) long before the machine's pid
	// space fills.
	shim := servers(t, s.Env)["bomb"].PID
	base := len(procPIDs())
	stopWatch := make(chan struct{})
	watched := make(chan bool, 1)
	go func() {
		for {
			select {
			case <-stopWatch:
				watched <- false
				return
			case <-time.After(10 * time.Millisecond):
			}
			if len(procPIDs()) > base+1000 {
				syscall.Kill(shim, syscall.SIGKILL)
				watched <- true
				return
			}
		}
	}()
	defer func() {
		close(stopWatch)
		if <-watched {
			t.Errorf("the fork bomb passed 1000 processes: the limit did not hold (its namespace was killed)")
		}
	}()
	if got := attempt(t, s.Env, bomb, "forkbomb", token); !strings.HasPrefix(got, "ok:") {
		t.Fatalf("fork bomb did not start: %s", got)
	}
	// Let it reach the limit: on a loaded machine that takes a while. The
	// shell leaves its children unreaped, so most of the tree is zombies:
	// they count against the limit, and here, as they hold their pids.
	peak := 0
	for deadline := time.Now().Add(20 * time.Second); peak < limit/2 && time.Now().Before(deadline); {
		peak = max(peak, descendants(shim))
		time.Sleep(5 * time.Millisecond)
	}
	if peak < limit/4 {
		t.Logf("daemon log:\n%s", s.MustRun("logs", "bomb"))
		t.Fatalf("the fork bomb reached only %d processes: did it run?", peak)
	}
	if peak > limit {
		t.Errorf("the fork bomb reached %d processes, above the limit of %d", peak, limit)
	}
	start := time.Now()
	s.MustRun("status")
	if got := attempt(t, s.Env, calm, "read", readable); got != "ok: still-readable" {
		t.Errorf("another sandboxed server during the bomb: %s", got)
	}
	t.Logf("fork bomb: peak %d processes (limit %d); status and a call to another server took %s during it", peak, limit, time.Since(start).Round(time.Millisecond))
	s.MustRun("rm", "bomb")
	if n := waitProcs(t, token, func(n int) bool { return n == 0 }, 15*time.Second); n != 0 {
		t.Errorf("%d fork bomb processes outlived the server", n)
	}
}

// Real servers from npm work sandboxed: the filesystem server on an allowed
// folder, which it cannot leave even when asked to (by a symlink out of
// it), and the memory server with its file in an allowed folder.
func TestSandboxNPMServers(t *testing.T) {
	t.Parallel()
	s := newSandboxEnv(t)
	canary := s.file(t, "home/.ssh/id_rsa", "CANARY-NPM-4e0a")
	notes := filepath.Join(s.root, "notes")
	s.file(t, "notes/todo.md", "buy milk")
	if err := os.Symlink(canary, filepath.Join(notes, "key")); err != nil {
		t.Fatal(err)
	}
	memDir := filepath.Join(s.root, "memory")
	if err := os.MkdirAll(memDir, 0o700); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(memDir, "memory.jsonl")
	s.ExtraEnv = append(s.ExtraEnv, "SANDBOX_MEMORY_FILE="+memFile)
	fsBin := testenv.NPMBin(t, "mcp-server-filesystem")
	memBin := testenv.NPMBin(t, "mcp-server-memory")
	s.StartDaemon()
	s.MustRun("add", "fs", "--sandbox", "--allow-write", notes, "--", fsBin, notes)
	s.MustRun("add", "mem", "--sandbox", "--allow-write", memDir, "--env", "MEMORY_FILE_PATH=SANDBOX_MEMORY_FILE", "--", memBin)
	list := tools(t, s.Env)

	read := toolNamed(t, list, "fs", "read_text_file").Name
	if out := s.MustRun("call", read, `{"path": "`+filepath.Join(notes, "todo.md")+`"}`); !strings.Contains(out, "buy milk") {
		t.Errorf("reading an allowed file: %s", out)
	}
	write := toolNamed(t, list, "fs", "write_file").Name
	s.MustRun("call", write, `{"path": "`+filepath.Join(notes, "new.md")+`", "content": "written sandboxed"}`)
	if b, err := os.ReadFile(filepath.Join(notes, "new.md")); err != nil || string(b) != "written sandboxed" {
		t.Errorf("writing an allowed file: %q, %v", b, err)
	}
	for _, p := range []string{canary, filepath.Join(notes, "key"), filepath.Join(s.Home, "creds.json")} {
		r := s.Run("", "call", read, `{"path": "`+p+`"}`)
		if strings.Contains(r.Stdout+r.Stderr, "CANARY-NPM") {
			t.Errorf("the filesystem server read %s: %s%s", p, r.Stdout, r.Stderr)
		}
	}

	create := toolNamed(t, list, "mem", "create_entities").Name
	s.MustRun("call", create, `{"entities": [{"name": "plexus", "entityType": "project", "observations": ["sandboxed"]}]}`)
	b, err := os.ReadFile(memFile)
	if err != nil || !strings.Contains(string(b), "sandboxed") {
		t.Errorf("memory file in the allowed folder: %q, %v", b, err)
	}
	graph := toolNamed(t, list, "mem", "read_graph").Name
	if out := s.MustRun("call", graph, `{}`); !strings.Contains(out, "plexus") {
		t.Errorf("read_graph: %s", out)
	}
}

// plexus import offers the strict sandbox, and --sandbox gives it to every
// imported stdio server.
func TestSandboxImport(t *testing.T) {
	t.Parallel()
	s := newSandboxEnv(t)
	s.StartDaemon()
	file := s.file(t, "claude.json", `{"mcpServers": {"ex": {"command": "`+s.Bin+`", "args": ["example-server"]}}}`)
	out := s.MustRun("import", "--dry-run", file, "--dialect", "claude")
	mustContain(t, "import without --sandbox", out, "plexus import --sandbox")
	s.MustRun("import", "--sandbox", file, "--dialect", "claude")
	st := waitState(t, s.Env, "ex", "ready", 20*time.Second)
	if st.Sandbox != "network none" {
		t.Errorf("imported server's sandbox: %q, want the strict preset", st.Sandbox)
	}
	mustContain(t, "ls", s.MustRun("ls"), "stdio, sandboxed")

	// plexus edit widens and removes it.
	s.MustRun("edit", "ex", "--allow-net", "127.0.0.1:9", "--allow-read", s.root)
	if got := servers(t, s.Env)["ex"].Sandbox; got != "network 127.0.0.1:9; read "+s.root {
		t.Errorf("after edit --allow-net --allow-read: %q", got)
	}
	s.MustRun("edit", "ex", "--no-sandbox")
	if got := servers(t, s.Env)["ex"].Sandbox; got != "" {
		t.Errorf("after edit --no-sandbox: %q", got)
	}
}
