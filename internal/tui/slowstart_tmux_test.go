package tui

import (
	"os"
	"path/filepath"
	"regexp"
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
	// Any second waited, not one in particular: each is on the screen for
	// a second only, which a loaded machine's look at it may miss.
	waited := regexp.MustCompile(`starting slow to check that it works… [1-9][0-9]*s`)
	x.waitScreen("the seconds waited and the stderr line", func(s string) bool {
		return waited.MatchString(s) && strings.Contains(s, "stderr: npm warn exec The following package was not found")
	})
}

// waitScreen polls the screen until ok holds.
func (x *tmux) waitScreen(what string, ok func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := x.capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("waiting for %s in the terminal; it shows\n%s", what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTerminalStartOnDemandShowsItsOutput calls, in the real terminal's
// daemon, a server started on demand that takes a while to start and
// writes what it does meanwhile (as a first `npx -y` does): its row in the
// list says "starting on demand" with its latest stderr line while the
// call waits, and no such line once it is stopped again; restarted from
// the list, the row says so with the new instance's latest line. A server
// added from the command line is listed at once, starting, with its
// start's output, not only once it is up. Each start goes on to its next
// line only once the test has seen the row show the one before (stepped):
// a line shown for a fixed time could be drawn and replaced between two
// looks at a loaded machine's screen.
func TestTerminalStartOnDemandShowsItsOutput(t *testing.T) {
	needTmux(t)
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	steps := stepper{dir: t.TempDir()}
	script := slowServer(t, e, "echo 'fetching the package: 1 of 2' >&2\n"+steps.wait(1)+
		"echo 'fetching the package: 2 of 2' >&2\n"+steps.wait(2))
	// Its first start lists its tools; then it is stopped when idle.
	steps.open(t, 1, 2)
	e.MustRun("add", "slow", "--start", "onDemand", "--idle-stop", "300", "--", script)
	steps.shut(t, 1, 2)
	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	x.waitText("stopped (idle)")
	called := make(chan testenv.Result, 1)
	go func() { called <- e.Run("", "call", "slow_echo", `{"text":"hi"}`) }()
	x.waitRow("slow", "◌ starting on demand", "fetching the package: 1 of 2")
	steps.open(t, 1)
	x.waitRow("slow", "◌ starting on demand", "fetching the package: 2 of 2")
	steps.open(t, 2)
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
	steps.shut(t, 1, 2)
	x.must("send-keys", "-t", "tui", "r")
	x.waitRow("slow", "restarting: fetching the package: 1 of 2")
	steps.open(t, 1)
	x.waitRow("slow", "restarting: fetching the package: 2 of 2")
	steps.open(t, 2)
	x.waitText("restarted slow")
	// An add from the command line, whose start waits for a step.
	adding := slowServer(t, e, "echo 'fetching the added package' >&2\n"+steps.wait(3))
	added := make(chan testenv.Result, 1)
	go func() { added <- e.Run("", "add", "added", "--", adding) }()
	x.waitRow("added", "◌ starting", "fetching the added package")
	steps.open(t, 3)
	if r := <-added; r.Code != 0 {
		t.Fatalf("the add: %+v", r)
	}
	x.waitRow("added", "● ready")
}

// stepper holds a slow server's start between its stderr lines: step n
// goes on once the file dir/n exists.
type stepper struct{ dir string }

// wait is the shell line that waits for step n.
func (s stepper) wait(n int) string {
	return "while [ ! -e " + strconv.Quote(filepath.Join(s.dir, strconv.Itoa(n))) + " ]; do sleep 0.05; done\n"
}

// open lets the steps go on.
func (s stepper) open(t *testing.T, steps ...int) {
	t.Helper()
	for _, n := range steps {
		if err := os.WriteFile(filepath.Join(s.dir, strconv.Itoa(n)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// shut makes the steps wait again, for the next start.
func (s stepper) shut(t *testing.T, steps ...int) {
	t.Helper()
	for _, n := range steps {
		if err := os.Remove(filepath.Join(s.dir, strconv.Itoa(n))); err != nil {
			t.Fatal(err)
		}
	}
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
