package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

func servers(t *testing.T, e *testenv.Env) map[string]apitype.ServerStatus {
	t.Helper()
	var list []apitype.ServerStatus
	out := e.MustRun("ls", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	m := map[string]apitype.ServerStatus{}
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

func tools(t *testing.T, e *testenv.Env, args ...string) []apitype.Tool {
	t.Helper()
	var list []apitype.Tool
	out := e.MustRun(append([]string{"tools", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, out)
	}
	return list
}

// toolNamed finds the catalog entry of a server's original tool name.
func toolNamed(t *testing.T, list []apitype.Tool, server, tool string) apitype.Tool {
	t.Helper()
	for _, tl := range list {
		if tl.Server == server && tl.Tool == tool {
			return tl
		}
	}
	t.Fatalf("no tool %s of server %s in %d tools", tool, server, len(list))
	return apitype.Tool{}
}

// waitState waits until a server reaches a state.
func waitState(t *testing.T, e *testenv.Env, name, state string, d time.Duration) apitype.ServerStatus {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s, ok := servers(t, e)[name]
		if ok && s.State == state {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s: state %q (last error %q), want %q after %s", name, s.State, s.LastError, state, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// groupGone waits until no process of the process group pgid is left.
func groupGone(t *testing.T, pgid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has processes after %s (kill(-pgid, 0) = %v)", pgid, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func mustContain(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%s: want %q in:\n%s", what, sub, s)
	}
}

// noLeaks stops the daemon and fails the test if any canary is in
// outputs (what commands printed), the daemon's log and output, or the
// settings file.
func noLeaks(t *testing.T, e *testenv.Env, outputs []string, canaries ...string) {
	t.Helper()
	e.StopDaemon()
	for _, f := range []string{"logs.jsonl", "extensions.json"} {
		b, err := os.ReadFile(filepath.Join(e.Home, f))
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, f+"\n"+string(b))
	}
	outputs = append(outputs, "daemon output\n"+e.DaemonOutput())
	for _, o := range outputs {
		for _, c := range canaries {
			if strings.Contains(o, c) {
				t.Errorf("the canary leaked in:\n%s", o)
			}
		}
	}
}
