package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTerminalSlowStart adds, in the real terminal, a server that takes
// seconds to start (a real child process that writes a stderr line and
// sleeps, as a first `npx -y` does while it downloads): while the form
// waits it shows the seconds waited and the server's latest stderr line.
func TestTerminalSlowStart(t *testing.T) {
	needTmux(t)
	e := testenv.New(t)
	e.StartDaemon()
	script := slowServer(t, e, "echo 'npm warn exec The following package was not found and will be installed' >&2\nsleep 6\n")
	x := openStdioForm(t, e)
	x.must("send-keys", "-t", "tui", "-l", script)
	x.must("send-keys", "-t", "tui", "Tab", "C-u")
	x.must("send-keys", "-t", "tui", "-l", "slow")
	x.must("send-keys", "-t", "tui", "C-s")
	x.waitText("starting slow to check that it works… 2s", "stderr: npm warn exec The following package was not found")
}

// TestTerminalStartOnDemandShowsItsOutput calls, in the real terminal's
// daemon, a server started on demand that takes seconds to start and
// writes what it does meanwhile (as a first `npx -y` does): its row in the
// list says "starting on demand" with its latest stderr line while the
// call waits, and no such line once it is stopped again; restarted from
// the list, the row says so with the new instance's latest line. A server
// added from the command line is listed at once, starting, with its
// start's output, not only once it is up.
func TestTerminalStartOnDemandShowsItsOutput(t *testing.T) {
	needTmux(t)
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	script := slowServer(t, e, "echo 'fetching the package: 1 of 2' >&2\nsleep 0.7\necho 'fetching the package: 2 of 2' >&2\nsleep 0.7\n")
	// Its first start lists its tools; then it is stopped when idle.
	e.MustRun("add", "slow", "--start", "onDemand", "--idle-stop", "300", "--", script)
	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	x.waitText("stopped (idle)")

	called := make(chan testenv.Result, 1)
	go func() { called <- e.Run("", "call", "slow_echo", `{"text":"hi"}`) }()
	x.waitRow("slow", "◌ starting on demand", "fetching the package: 1 of 2")
	x.waitRow("slow", "◌ starting on demand", "fetching the package: 2 of 2")
	if r := <-called; r.Code != 0 || !strings.Contains(r.Stdout, "hi") {
		t.Fatalf("the call: %+v", r)
	}
	screen := x.waitText("◦ stopped (idle)")
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "slow") && strings.Contains(l, "fetching") {
			t.Fatalf("an idle server's row shows the output of its start:\n%s", screen)
		}
	}

	// A restart starts the new instance beside the old one, which keeps
	// its state until the new one is up: the row says it restarts, and
	// what the new one writes.
	x.must("send-keys", "-t", "tui", "r")
	x.waitRow("slow", "restarting: fetching the package: 1 of 2")
	x.waitRow("slow", "restarting: fetching the package: 2 of 2")
	x.waitText("restarted slow")

	// An add from the command line, whose start waits for a file.
	gate := filepath.Join(t.TempDir(), "go-on")
	adding := slowServer(t, e, "echo 'fetching the added package' >&2\nwhile [ ! -e "+strconv.Quote(gate)+" ]; do sleep 0.05; done\n")
	added := make(chan testenv.Result, 1)
	go func() { added <- e.Run("", "add", "added", "--", adding) }()
	x.waitRow("added", "◌ starting", "fetching the added package")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := <-added; r.Code != 0 {
		t.Fatalf("the add: %+v", r)
	}
	x.waitRow("added", "● ready")
}

// waitRow polls the screen until the list's row of server name shows
// every one of texts.
func (x *tmux) waitRow(name string, texts ...string) {
	x.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := x.capture()
		for _, l := range strings.Split(s, "\n") {
			f := strings.Fields(strings.TrimPrefix(l, "›"))
			if len(f) == 0 || f[0] != name {
				continue
			}
			ok := true
			for _, t := range texts {
				ok = ok && strings.Contains(l, t)
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("waiting for %q in the row of %s; the terminal shows\n%s", texts, name, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// slowServer writes a stdio server that runs the shell lines before (what
// a first `npx -y` does before its server starts) and then the example
// server, and returns its path.
func slowServer(t *testing.T, e *testenv.Env, before string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "slow.sh")
	body := "#!/bin/sh\n" + before + "exec " + strconv.Quote(e.Bin) + " example-server\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}
