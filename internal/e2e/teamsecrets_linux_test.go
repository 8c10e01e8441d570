package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// copyExecutable copies the file at src to dir, executable by all.
func copyExecutable(t *testing.T, src, dir string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// ownUser is the credential to run a daemon as a user of its own, as a
// pod does (the chart's 65532), and gives it dirs: as root every process
// reads every other's memory, so a root test runs the daemon as nobody;
// any other user runs it as itself (nil), as a pod's user is.
func ownUser(t *testing.T, dirs ...string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("running as root, with no nobody user to run the daemon as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range dirs {
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// rpc2026 posts one MCP 2026-07-28 request of method with params (JSON)
// to base's /mcp and returns the answer (or why there was none).
func rpc2026(t *testing.T, base, token, method, params string) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	p["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]string{"name": "c", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": method, "params": p})
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := p["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

// podReplica is a team replica started as a pod runs one: its own user
// (ownUser), a home and TMPDIR of its own under dir, the given
// environment and flags.
type podReplica struct {
	base, home, token string
	pid               string
	out               *testenv.SyncBuffer
}

// startPodReplica starts bin as a replica in dir/NAME (owned by cred's
// user) and waits until tool names matching toolRE are listed; it returns
// the replica and the names.
func startPodReplica(t *testing.T, dir, name, bin string, cred *syscall.Credential, env []string, toolRE string, args ...string) (*podReplica, []string) {
	t.Helper()
	pod := filepath.Join(dir, name)
	home, tmp := filepath.Join(pod, "home"), filepath.Join(pod, "tmp")
	for _, d := range []string{pod, home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			os.Chown(d, int(cred.Uid), int(cred.Gid))
		}
	}
	port := testenv.FreePort(t)
	cmd := exec.Command(bin, append([]string{"daemon", "--listen", "127.0.0.1:" + strconv.Itoa(port)}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PLEXUS_HOME=" + home, "TMPDIR=" + tmp}, env...)
	r := &podReplica{base: "http://127.0.0.1:" + strconv.Itoa(port), home: home, out: &testenv.SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = r.out, r.out
	cmd.Dir = pod
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	r.pid = strconv.Itoa(cmd.Process.Pid)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s: the daemon's output:\n%s", name, r.out)
		}
	})
	var tools []string
	within(t, 20*time.Second, name+": the servers' tools listed", func() bool {
		select {
		case <-done:
			t.Fatalf("%s: the daemon exited:\n%s", name, r.out)
		default:
		}
		b, err := os.ReadFile(filepath.Join(home, "token"))
		if err != nil {
			return false
		}
		r.token = strings.TrimSpace(string(b))
		tools = tools[:0]
		for _, m := range regexp.MustCompile(`"name":"(`+toolRE+`)"`).FindAllStringSubmatch(rpc2026(t, r.base, r.token, "tools/list", "{}"), -1) {
			tools = append(tools, m[1])
		}
		return len(tools) == strings.Count(toolRE, "|")+1
	})
	return r, tools
}

// attempt calls the hostile server's tool on r and returns its text.
func (r *podReplica) attempt(t *testing.T, tool, attack, target string) string {
	t.Helper()
	got := rpc2026(t, r.base, r.token, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"attack":%q,"target":%q}}`, tool, attack, target))
	i := strings.Index(got, `"text":`)
	if i < 0 {
		t.Fatalf("%s %s %s: no answer: %s", tool, attack, target, got)
	}
	return got[i:]
}

// TestTeamSecretsOutOfReach: two replicas of one database, each running as
// an unprivileged user of its own as in a pod, each with two stdio
// servers that try to steal the team's secrets: "probe", with no sandbox
// in its settings, and "trusted", opted out ("sandbox": false).
//
// The env replica is given its database URL (with a password) and its
// store key in the environment, as the chart gives them: neither server
// finds them in its own environment, in the daemon's command line, or in
// the daemon's environment or memory (/proc/PID/environ, /proc/PID/mem:
// the daemon is not dumpable). Before, the URL was on the command line
// (--store postgres://user:password@…) and the key in a file that user
// reads.
//
// The files replica is given both as files (--store-url-file,
// --store-key-file, as a Secret's volume gives them), which its user must
// read: probe, sandboxed by default on a replica, reads neither file, nor
// the home's token, oauth.json or creds.json (canaries planted there),
// while it still answers; trusted, opted out, reads the key file — the
// read probe is refused would succeed without the default sandbox. No
// secret appears in either daemon's log.
func TestTeamSecretsOutOfReach(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	seed := testenv.New(t)
	hostile := testenv.HostileServer(t)
	dir, err := os.MkdirTemp("", "plexus-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := copyExecutable(t, seed.Bin, dir)
	hostile = copyExecutable(t, hostile, dir)
	cred := ownUser(t)

	// The settings, with the servers that try, in the database.
	if err := os.MkdirAll(seed.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"mcp": {"servers": {"probe": {"type": "stdio", "command": %[1]q},
		"trusted": {"type": "stdio", "command": %[1]q, "sandbox": false}}, "face": {"allowExternalCall": true}}}`, hostile)
	if err := os.WriteFile(filepath.Join(seed.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seed.MustRun("store", "migrate", "--from", seed.Home, "--to", pg.URL, "--store-key-file", keyFile)

	const password = "CANARY-db-password-8d21"
	url := strings.Replace(pg.URL, "postgres://plexus@", "postgres://plexus:"+password+"@", 1)
	keyText := base64.StdEncoding.EncodeToString(key)
	const tools = `probe_attempt[^"]*|trusted_attempt[^"]*`
	leaked := func(got string) bool {
		return strings.Contains(got, password) || strings.Contains(got, keyText) || strings.Contains(got, "PLEXUS_STORE_URL=") || strings.Contains(got, "PLEXUS_STORE_KEY=")
	}

	env, envTools := startPodReplica(t, dir, "env", bin, cred, []string{"PLEXUS_STORE_URL=" + url, "PLEXUS_STORE_KEY=" + keyText}, tools)
	for _, tool := range envTools {
		for _, tc := range []struct{ attack, target string }{
			{"env", "PLEXUS_STORE_URL"},
			{"env", "PLEXUS_STORE_KEY"},
			{"read", "/proc/" + env.pid + "/cmdline"},
			{"read", "/proc/" + env.pid + "/environ"},
			{"read", "/proc/" + env.pid + "/mem"},
			{"read", "/proc/self/environ"},
		} {
			got := env.attempt(t, tool, tc.attack, tc.target)
			if leaked(got) {
				t.Errorf("env replica: %s read the store's secrets with %s %s: %.300s", tool, tc.attack, tc.target, got)
			}
			t.Logf("env replica: %s %s %s: %.160s", tool, tc.attack, tc.target, got)
		}
	}

	// The files replica: the secrets in a folder of its user's, as a
	// Secret's volume is, and canaries in its home where the documents
	// of a one-machine daemon are.
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	urlFile, podKeyFile := filepath.Join(secrets, "url"), filepath.Join(secrets, "key")
	for f, text := range map[string]string{urlFile: url, podKeyFile: keyText} {
		if err := os.WriteFile(f, []byte(text+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{secrets, urlFile, podKeyFile} {
		if cred != nil {
			os.Chown(f, int(cred.Uid), int(cred.Gid))
		}
	}
	files, fileTools := startPodReplica(t, dir, "files", bin, cred, nil, tools, "--store-url-file", urlFile, "--store-key-file", podKeyFile)
	canaries := map[string]string{"oauth.json": "CANARY-oauth-5f3a", "creds.json": "CANARY-creds-c81e"}
	for name, text := range canaries {
		f := filepath.Join(files.home, name)
		if err := os.WriteFile(f, []byte(`{"canary":"`+text+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			os.Chown(f, int(cred.Uid), int(cred.Gid))
		}
	}
	probe, trusted := fileTools[0], fileTools[1]
	if strings.Contains(probe, "trusted") {
		probe, trusted = trusted, probe
	}
	if got := files.attempt(t, probe, "cwd", ""); !strings.Contains(got, `"text":"ok: `) {
		t.Errorf("the sandboxed server does not work: %s", got)
	}
	for _, target := range []string{podKeyFile, urlFile, filepath.Join(files.home, "token"), filepath.Join(files.home, "oauth.json"), filepath.Join(files.home, "creds.json")} {
		got := files.attempt(t, probe, "read", target)
		if !strings.Contains(got, `"text":"refused: `) || leaked(got) || strings.Contains(got, files.token) ||
			strings.Contains(got, canaries["oauth.json"]) || strings.Contains(got, canaries["creds.json"]) {
			t.Errorf("files replica: a server sandboxed by default read %s: %.300s", target, got)
		}
		t.Logf("files replica: %s read %s: %.160s", probe, target, got)
	}
	if got := files.attempt(t, trusted, "read", podKeyFile); !strings.Contains(got, keyText) {
		t.Errorf("files replica: the opted-out server could not read the key file either, so the test proves nothing: %.300s", got)
	}
	for _, r := range []*podReplica{env, files} {
		logs, _ := os.ReadFile(filepath.Join(r.home, "logs.jsonl"))
		for what, text := range map[string]string{"log": string(logs), "output": r.out.String()} {
			if strings.Contains(text, password) || strings.Contains(text, keyText) {
				t.Errorf("the daemon's %s holds a secret", what)
			}
		}
	}
}
