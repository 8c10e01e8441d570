package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/lifeline"
	"golang.org/x/sys/unix"
)

const canary = "canary-s3cret-7f3a"

// fakeSpec runs the test binary as the fake server mode, with extra
// environment as key, value pairs.
func fakeSpec(t *testing.T, mode string, kv ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{fakeEnv: mode, "FAKE_SECRET": canary}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return Spec{
		Name:           "fake",
		Type:           "stdio",
		Argv:           []string{exe},
		Env:            env,
		Dir:            t.TempDir(),
		StartupTimeout: 20 * time.Second,
		StopGrace:      500 * time.Millisecond,
		Secrets:        []string{canary},
	}
}

func mustConnect(t *testing.T, s Spec) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), s)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resultText is the text of a tool result's first content.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("empty result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func callInfo(t *testing.T, c *Conn) serverInfo {
	t.Helper()
	res, err := c.CallTool(context.Background(), "info", nil)
	if err != nil {
		t.Fatal(err)
	}
	var info serverInfo
	if err := json.Unmarshal([]byte(resultText(t, res)), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	return lifeline.ProcessAlive(pid)
}

// requireGroupDead fails unless no live process of pgid is left within d, and
// logs whether the group vanished entirely (that also needs the zombies'
// parent, possibly init, to reap them).
func requireGroupDead(t *testing.T, pgid int, d time.Duration) {
	t.Helper()
	if !lifeline.WaitGroupGone(pgid, d) {
		t.Fatalf("process group %d still has live processes after %v", pgid, d)
	}
	if waitFor(d, func() bool { return errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) }) {
		return
	}
	t.Logf("process group %d: only unreaped zombies left", pgid)
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func stderrHas(c *Conn, substr string) bool {
	for _, l := range c.Stderr() {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// logBuffer collects log output for secret checks.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// sessionsEnded fails the test if the SDK server s still holds a session
// a while after the test's connections were closed: a Conn ends the
// sessions it opened (over streamable HTTP, with a DELETE), so that no
// server is left holding one. Call it before connecting, so that the
// check runs after the connections' own cleanups.
func sessionsEnded(t *testing.T, s *mcp.Server) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := 0
			for range s.Sessions() {
				n++
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the server still holds %d session(s) 10s after the test's connections were closed", n)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// names are the "name" members of listed definitions, in order.
func names(t *testing.T, defs []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, d := range defs {
		var v struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("definition %s: %v", d, err)
		}
		out = append(out, v.Name)
	}
	return out
}
