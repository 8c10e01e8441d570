package testenv

import (
	"bufio"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartNodeHTTPServer runs an npm-installed MCP server (e.g.
// mcp-server-everything streamableHttp) on 127.0.0.1 only, and returns its
// base URL once it accepts connections. It is stopped when the test ends.
func StartNodeHTTPServer(t testing.TB, bin string, args ...string) string {
	t.Helper()
	port := FreePort(t)
	script, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	preload := filepath.Join(RepoRoot(), "internal", "testenv", "loopback.cjs")
	cmd := exec.Command("node", append([]string{"--require", preload, script}, args...)...)
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	stderr, _ := cmd.StderrPipe()
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var lines []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s: %v\n%s", bin, addr, err, strings.Join(lines, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
