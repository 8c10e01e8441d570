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

// TestTeamSecretsOutOfReach: a replica given its database URL (with a
// password) and its store key in the environment, as the chart gives
// them, running as an unprivileged user as in a pod: a stdio server it
// runs as that same user finds neither in its own environment, in the
// daemon's command line, or in the daemon's environment or memory
// (/proc/PID/environ, /proc/PID/mem: the daemon is not dumpable); and
// neither appears in the daemon's log. Before, the URL was on the
// command line (--store postgres://user:password@…) and the key in a
// file that user reads.
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
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cred := ownUser(t, home, tmp)

	// The settings, with the server that tries, in the database.
	if err := os.MkdirAll(seed.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"mcp": {"servers": {"probe": {"type": "stdio", "command": %q}}, "face": {"allowExternalCall": true}}}`, hostile)
	if err := os.WriteFile(filepath.Join(seed.Home, "extensions.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seed.MustRun("store", "migrate", "--from", seed.Home, "--to", pg.URL, "--store-key-file", keyFile)

	const password = "CANARY-db-password-8d21"
	url := strings.Replace(pg.URL, "postgres://plexus@", "postgres://plexus:"+password+"@", 1)
	keyText := base64.StdEncoding.EncodeToString(key)
	port := testenv.FreePort(t)
	cmd := exec.Command(bin, "daemon", "--listen", "127.0.0.1:"+strconv.Itoa(port))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PLEXUS_HOME=" + home, "TMPDIR=" + tmp,
		"PLEXUS_STORE_URL=" + url, "PLEXUS_STORE_KEY=" + keyText}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
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
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	var token, tool string
	within(t, 20*time.Second, "the probe server's tool listed", func() bool {
		select {
		case <-done:
			t.Fatalf("the daemon exited:\n%s", out)
		default:
		}
		b, err := os.ReadFile(filepath.Join(home, "token"))
		if err != nil {
			return false
		}
		token = strings.TrimSpace(string(b))
		m := regexp.MustCompile(`"name":"(mcp_probe_attempt[^"]*)"`).FindStringSubmatch(rpc2026(t, base, token, "tools/list", "{}"))
		if m != nil {
			tool = m[1]
		}
		return m != nil
	})
	attempt := func(attack, target string) string {
		return rpc2026(t, base, token, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"attack":%q,"target":%q}}`, tool, attack, target))
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, tc := range []struct{ attack, target string }{
		{"env", "PLEXUS_STORE_URL"},
		{"env", "PLEXUS_STORE_KEY"},
		{"read", "/proc/" + pid + "/cmdline"},
		{"read", "/proc/" + pid + "/environ"},
		{"read", "/proc/" + pid + "/mem"},
		{"read", "/proc/self/environ"},
	} {
		got := attempt(tc.attack, tc.target)
		if !strings.Contains(got, `"text":`) {
			t.Fatalf("%s %s: no answer: %s", tc.attack, tc.target, got)
		}
		if strings.Contains(got, password) || strings.Contains(got, keyText) || strings.Contains(got, "PLEXUS_STORE_URL=") || strings.Contains(got, "PLEXUS_STORE_KEY=") {
			t.Errorf("a stdio server read the store's secrets with %s %s: %.300s", tc.attack, tc.target, got)
		}
		t.Logf("%s %s: %.160s", tc.attack, tc.target, got[strings.Index(got, `"text":`):])
	}
	logs, _ := os.ReadFile(filepath.Join(home, "logs.jsonl"))
	for what, text := range map[string]string{"log": string(logs), "output": out.String()} {
		if strings.Contains(text, password) || strings.Contains(text, keyText) {
			t.Errorf("the daemon's %s holds a secret", what)
		}
	}
}
