package testenv

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartScriptHTTP runs testenv/scripthttp on script (the scriptserver's
// rules, served as a session-era streamable HTTP server) on 127.0.0.1 and
// returns its endpoint once it listens. What it received goes to a file
// whose path the second result is. It is stopped when the test ends.
func StartScriptHTTP(t testing.TB, script string) (url, saw string) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	saw = filepath.Join(t.TempDir(), "saw.txt")
	cmd := exec.Command(BuildCommand(t, "./internal/testenv/scripthttp"), "-addr", addr, "-saw", saw, script)
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr + "/mcp", saw
		}
		if time.Now().After(end) {
			t.Fatalf("scripthttp did not listen on %s:\n%s", addr, out.String())
		}
	}
}
