//go:build linux

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestAPIRefusesWhatIsNotItsClient: the daemon's socket is reachable by
// more than its clients — any process of the user that knows its path,
// the servers the daemon itself starts, a sandboxed server in namespaces
// of its own. Each of them tries what a hostile server did to a daemon
// that checked only the caller's uid: add a server (whose
// command runs at once, in the start check), set a secret, restart a
// server (start a process), open the MCP face, read the settings. Every
// attempt is refused, nothing runs and nothing changes; the CLI, and the
// same probe as a client holding the token, keep working.
func TestAPIRefusesWhatIsNotItsClient(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	probe := testenv.SockProbe(t)
	sock := filepath.Join(e.Home, "plexus.sock")
	tokenFile := filepath.Join(e.Home, "token")
	marks := t.TempDir()
	if err := os.Chmod(marks, 0o777); err != nil {
		t.Fatal(err)
	}

	// attempts are what an attacker named who sends: method, path, body.
	attempts := func(who string) [][3]string {
		mark := filepath.Join(marks, who)
		return [][3]string{
			{"POST", "/v1/servers", `{"name":"evil-` + who + `","config":{"type":"stdio","command":"sh","args":["-c","touch ` + mark + `"]}}`},
			{"PUT", "/v1/secrets/STOLEN_" + strings.ToUpper(who), `{"value":"x"}`},
			{"POST", "/v1/servers/example/restart", ""},
			{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`},
			{"GET", "/v1/export?client=claude", ""},
		}
	}
	// script is a shell line running every attempt of who with the
	// token, each answer into its own file.
	script := func(who string) string {
		var b strings.Builder
		for i, a := range attempts(who) {
			b.WriteString(shellQuote(probe) + " -token-file " + shellQuote(tokenFile) + " -out " + shellQuote(filepath.Join(marks, who+"-answer-"+string(rune('0'+i)))) +
				" " + shellQuote(sock) + " " + a[0] + " " + a[1] + " " + shellQuote(a[2]) + "; ")
		}
		return b.String()
	}
	pidBefore := serverPID(t, e, "example")

	// 1. A process of the user that has the socket's path but not the
	//    token (a sandbox that can connect but not read the home).
	var said []byte // what the daemon answered the refused
	for _, a := range attempts("pathonly") {
		out, err := exec.Command(probe, sock, a[0], a[1], a[2]).Output()
		if err != nil {
			t.Fatal(err)
		}
		said = append(said, out...)
		refused(t, "a caller without the token", a, string(out))
	}

	// 2. A server the daemon started, with the token: its own children
	//    never drive the daemon.
	e.Run("", "add", "child", "--", "sh", "-c", script("child")+"exec "+shellQuote(e.Bin)+" example-server")
	for i, a := range attempts("child") {
		b, err := os.ReadFile(filepath.Join(marks, "child-answer-"+string(rune('0'+i))))
		if err != nil {
			t.Fatalf("the server's attempt %s %s left no answer: %v", a[0], a[1], err)
		}
		refused(t, "a server the daemon started", a, string(b))
	}

	// 3. A process in a user and PID namespace of its own, with the
	//    token: what a sandboxed server is to the daemon.
	for _, a := range attempts("namespaced") {
		out, err := inNamespaces(exec.Command(probe, "-token-file", tokenFile, sock, a[0], a[1], a[2])).Output()
		if errors.Is(err, syscall.EPERM) {
			requireSandbox(t) // says why this kernel, or this user, cannot make one
		}
		if err != nil {
			t.Fatal(err)
		}
		said = append(said, out...)
		refused(t, "a caller in namespaces of its own", a, string(out))
	}

	// Nothing ran, nothing changed.
	entries, _ := os.ReadDir(marks)
	for _, en := range entries {
		if !strings.Contains(en.Name(), "-answer-") {
			t.Errorf("a refused caller's server ran: %s exists", en.Name())
		}
	}
	c := client.New(e.Home)
	list, err := c.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Servers {
		if strings.HasPrefix(s.Name, "evil-") {
			t.Errorf("a refused caller added server %s", s.Name)
		}
	}
	secrets, err := c.Secrets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(secrets.Names, func(n string) bool { return strings.HasPrefix(n, "STOLEN_") }); i >= 0 {
		t.Errorf("a refused caller set secret %s", secrets.Names[i])
	}
	if pid := serverPID(t, e, "example"); pid != pidBefore {
		t.Errorf("a refused caller restarted a server (pid %d, then %d)", pidBefore, pid)
	}

	// The token is a secret: no refusal, log line or output names it.
	tok, err := os.ReadFile(tokenFile)
	if err != nil || len(strings.TrimSpace(string(tok))) < 32 {
		t.Fatalf("the token: %q, %v", tok, err)
	}
	logs, _ := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
	for where, text := range map[string]string{"the refusals": string(said) + answers(t, marks), "the log": string(logs), "the daemon's output": e.DaemonOutput()} {
		if strings.Contains(text, strings.TrimSpace(string(tok))) {
			t.Errorf("%s hold the token", where)
		}
	}

	// The daemon's clients: the CLI, and the probe itself as a client
	// holding the token (so that the refusals above are the daemon's).
	if r := e.Run("ok\n", "secret", "set", "MINE"); r.Code != 0 {
		t.Fatalf("plexus secret set: exit %d: %s", r.Code, r.Stderr)
	}
	out, err := exec.Command(probe, "-token-file", tokenFile, sock, "GET", "/v1/status").Output()
	if err != nil || !strings.HasPrefix(string(out), "200 ") {
		t.Fatalf("a client with the token: %s %v", out, err)
	}
}

// answers is what the probes wrote in dir.
func answers(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if strings.Contains(en.Name(), "-answer-") {
			a, _ := os.ReadFile(filepath.Join(dir, en.Name()))
			b.Write(a)
		}
	}
	return b.String()
}

// inNamespaces runs cmd in a user and a PID namespace of its own, its
// user and group mapped to themselves, as the sandbox runs a server.
func inNamespaces(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}}
	return cmd
}

// refused fails unless answer (sockprobe's) is a refusal by the guard.
func refused(t *testing.T, who string, a [3]string, answer string) {
	t.Helper()
	if !strings.HasPrefix(answer, "401 ") && !strings.HasPrefix(answer, "403 ") {
		t.Errorf("%s: %s %s was answered %.300s", who, a[0], a[1], answer)
	}
}

// serverPID is the pid of a ready server.
func serverPID(t *testing.T, e *testenv.Env, name string) int {
	t.Helper()
	st := waitState(t, e, name, "ready", 10*time.Second)
	return st.PID
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
