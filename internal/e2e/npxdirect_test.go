package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/statewords"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestNpxServerRunsWithoutNpmWrapper: a real npm server (server-memory, as
// the tests pin it, in a package of its own installed by npx from a local
// tarball into a cache of the test's) added as `npx -y PKG` answers its
// tools, and its process group holds the server alone: no `npm exec`. Once
// npx's cache has lost the package, the server's next start (on demand,
// after a daemon restart) is "installing" until it is ready.
func TestNpxServerRunsWithoutNpmWrapper(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil && os.Getenv("CI") == "" {
		t.Skip("npx is missing (CI installs it)")
	}
	memory, err := filepath.EvalSymlinks(testenv.NPMBin(t, "mcp-server-memory"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entry, _ := json.Marshal(memory)
	testenv.NPMPackage(t, filepath.Join(dir, "px-memory.tgz"),
		[2]string{"package.json", `{"name":"px-memory","version":"1.0.0","bin":{"px-memory":"cli.js"}}`},
		[2]string{"cli.js", "#!/usr/bin/env node\nimport(" + string(entry) + ")\n"})

	e := testenv.New(t)
	e.ExtraEnv = append(e.ExtraEnv, "PX_NPM_CACHE="+filepath.Join(dir, "cache"), "PX_NO_NOTIFIER=false")
	e.StartDaemon()
	if r := e.Run("", "add", "mem", "--cwd", dir, "--env", "npm_config_cache=PX_NPM_CACHE", "--env", "npm_config_update_notifier=PX_NO_NOTIFIER", "--", "npx", "-y", "./px-memory.tgz"); r.Code != 0 {
		t.Fatalf("add: exit %d\n%s", r.Code, r.Stderr)
	}
	s := servers(t, e)["mem"]
	if s.State != "ready" || s.PID == 0 {
		t.Fatalf("mem after add: %+v", s)
	}
	out := e.MustRun("call", toolNamed(t, tools(t, e), "mem", "read_graph").Name, "{}")
	mustContain(t, "read_graph's result", out, "entities")

	// The group the server runs in (its lifeline shim leads it).
	var group []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(s.PID) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			group = append(group, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
		}
	}
	server := false
	for _, c := range group {
		if strings.HasPrefix(c, "npm ") || strings.Contains(c, "npx-cli") || strings.Contains(c, "npm-cli") {
			t.Errorf("npm runs beside the server: %q in %q", c, group)
		}
		server = server || strings.Contains(c, filepath.Join("_npx", "")) && strings.Contains(c, "px-memory")
	}
	if !server {
		t.Errorf("no process runs the bin from the npx folder: %q", group)
	}

	if testing.Short() {
		return // the race run: the plain run checks the reinstall
	}
	// An empty npx cache: the wake that the call makes installs.
	e.StopDaemon()
	if err := os.RemoveAll(filepath.Join(dir, "cache", "_npx")); err != nil {
		t.Fatal(err)
	}
	e.StartDaemon()
	events, err := client.New(e.Home).Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	out = e.MustRun("call", toolNamed(t, tools(t, e), "mem", "read_graph").Name, "{}")
	mustContain(t, "read_graph's result after the reinstall", out, "entities")
	var seen []string
	for {
		ev, err := events.Next()
		if err != nil {
			t.Fatalf("event stream: %v; mem's states: %q", err, seen)
		}
		if ev.Type != apitype.EventServer || ev.Server != "mem" || ev.Status == nil {
			continue
		}
		seen = append(seen, statewords.Of(*ev.Status))
		if ev.Status.State == apitype.StateReady {
			break
		}
	}
	if !slices.Contains(seen, statewords.Installing) {
		t.Errorf("mem's states through its reinstalling wake: %q, no %q", seen, statewords.Installing)
	}
}
