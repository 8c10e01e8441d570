package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// needTmux skips a test without tmux on a developer's machine; in CI, where
// .ci/run installs it, its absence is a failure.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed: .ci/run installs it with apt")
		}
		t.Skip("tmux is not installed")
	}
}

// tmux is one tmux server of the test's own, on a socket in a temporary
// directory: the real terminal `plexus tui` runs in.
type tmux struct {
	t    *testing.T
	sock string
}

// newTmux starts the test's tmux server in the foreground (-D), as a
// process the test owns: were the test binary killed, a daemonized server
// and the plexus tui in it would live on. It is ended with the test.
func newTmux(t *testing.T) *tmux {
	t.Helper()
	x := &tmux{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := exec.Command("tmux", "-S", x.sock, "-f", "/dev/null", "-D")
	if err := testenv.Start(t, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		x.run("kill-server")
		cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(x.sock); err == nil {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmux -D made no socket at %s", x.sock)
		}
	}
}

func (x *tmux) run(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", x.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

func (x *tmux) must(args ...string) string {
	x.t.Helper()
	out, err := x.run(args...)
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// capture returns the screen as text, without colour.
func (x *tmux) capture() string { return x.must("capture-pane", "-p", "-t", "tui") }

// waitText polls the screen until it shows every one of texts.
func (x *tmux) waitText(texts ...string) string {
	x.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s := x.capture()
		ok := true
		for _, t := range texts {
			ok = ok && strings.Contains(s, t)
		}
		if ok {
			// A frame is drawn in pieces (Bubble Tea v2 writes the cells
			// that changed): the screen as it settles, not one mid-frame.
			for range 20 {
				time.Sleep(50 * time.Millisecond)
				next := x.capture()
				if next == s {
					break
				}
				s = next
			}
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("waiting for %q in the terminal; it shows\n%s", texts, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitGolden waits until the screen shows every one of texts and then
// until, normalized, it is the whole of testdata/name.golden (untilGolden:
// a part of the screen the texts do not name may come later), compares it
// with golden at w x h, and returns it as captured.
func (x *tmux) waitGolden(name string, w, h int, texts ...string) string {
	x.t.Helper()
	s := x.waitText(texts...)
	last := s
	untilGolden(name, normalize(s), func() string {
		last = x.waitText(texts...)
		return normalize(last)
	})
	golden(x.t, name, normalize(last), w, h)
	return last
}

// What normalize masks: the timestamp of the example server's stderr line,
// which changes from run to run, and the example server's catalog (its
// tool count and names), which is the example server's business, not the
// screen's.
var (
	stderrTime   = regexp.MustCompile(`time=\S+`)
	exampleTools = regexp.MustCompile(`(?m)^tools     [a-z0-9_, ]+$`)
	toolCount    = regexp.MustCompile(`(?m)^(. \S+ +● ready +stdio +)\d+`)
	savedTools   = regexp.MustCompile(`\(ready, \d+ tools\)`)
)

func normalize(screen string) string {
	screen = stderrTime.ReplaceAllString(screen, "time=…")
	screen = exampleTools.ReplaceAllString(screen, "tools     (the example server's tools)")
	screen = toolCount.ReplaceAllString(screen, "${1}N")
	screen = savedTools.ReplaceAllString(screen, "(ready, N tools)")
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(dropCoverageWarnings(lines), "\n")
}

// coverageWarning is what a binary built with -cover prints when it runs
// without GOCOVERDIR: the example servers the daemon starts do in a
// coverage run (a server's environment is its own, not the daemon's).
const coverageWarning = "warning: GOCOVERDIR not set, no coverage data emitted"

// dropCoverageWarnings takes the coverage runtime's warnings out of a
// screen in a coverage run, keeping its height: the stderr box has as many
// more blank lines above the two footer lines as it showed warnings.
func dropCoverageWarnings(lines []string) []string {
	if testing.CoverMode() == "" || len(lines) < 2 {
		return lines
	}
	kept := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.TrimSpace(l) == coverageWarning })
	gone := len(lines) - len(kept)
	if gone == 0 {
		return lines
	}
	foot := kept[len(kept)-2:]
	return slices.Concat(kept[:len(kept)-2], make([]string, gone), foot)
}

// startExampleTUI starts a daemon with the example server and `plexus
// tui` in a tmux terminal of 80x24, ended with the test.
func startExampleTUI(t *testing.T) (*testenv.Env, *tmux, time.Time) {
	t.Helper()
	needTmux(t)
	e := testenv.New(t)
	// "plexus" on the daemon's PATH, so that the screen shows the same
	// command line on every machine.
	e.ExtraEnv = []string{"PATH=" + filepath.Dir(e.Bin) + ":" + os.Getenv("PATH")}
	e.StartDaemon()
	e.MustRun("add", "example", "--", "plexus", "example-server")

	x := newTmux(t)
	start := time.Now()
	x.must("new-session", "-d", "-s", "tui", "-x", "80", "-y", "24",
		"env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	return e, x, start
}

// openStdioForm runs `plexus tui` on e's daemon, which has no servers, in
// a tmux terminal of 120x30 ended with the test, and opens the form for a
// new stdio server.
func openStdioForm(t *testing.T, e *testenv.Env) *tmux {
	t.Helper()
	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", "env PLEXUS_HOME="+e.Home+" "+e.Bin+" tui")
	x.waitText("No servers yet")
	x.must("send-keys", "-t", "tui", "n")
	x.waitText("new server", "[http]")
	x.must("send-keys", "-t", "tui", "Right")
	x.waitText("[stdio]")
	return x
}

// TestTerminalEndToEnd runs the built `plexus tui` in a real terminal
// (tmux, 80x24) against a running daemon: the list, a server added through
// the form with keys typed, and q restoring the terminal.
func TestTerminalEndToEnd(t *testing.T) {
	e, x, start := startExampleTUI(t)
	// Keep the pane once plexus exits, to see what it left on the screen.
	x.must("set-option", "-t", "tui", "remain-on-exit", "on")

	// The list and the settings come in separate answers: wait for both
	// (the settings say external calls are off) before the screen is
	// compared, or it may be caught between them.
	x.waitGolden("tmux-list", 80, 24, "example", "● ready", "sha256, sleep", "external calls are off")
	t.Logf("plexus tui showed the list %s after it was started", time.Since(start).Round(time.Millisecond))

	x.must("send-keys", "-t", "tui", "n")
	x.waitText("new server", "[http]")
	x.must("send-keys", "-t", "tui", "Right")
	x.waitText("[stdio]")
	x.must("send-keys", "-t", "tui", "-l", `'plexus' "example-server"`)
	x.must("send-keys", "-t", "tui", "Tab", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
	x.must("send-keys", "-t", "tui", "-l", "second")
	x.must("send-keys", "-t", "tui", "Tab")
	x.must("send-keys", "-t", "tui", "-l", "TOKEN=canary-tmux-secret")
	form := x.waitGolden("tmux-form", 80, 24, "name          second", "sets TOKEN")
	x.must("send-keys", "-t", "tui", "C-s")
	saved := time.Now()
	s := x.waitGolden("tmux-added", 80, 24, "added second (ready, ", "2 servers · 2 ready", "sha256, sleep", "time=")
	t.Logf("ctrl+s to the server shown ready: %s", time.Since(saved).Round(time.Millisecond))
	if strings.Contains(s, "canary-tmux-secret") || strings.Contains(form, "canary-tmux-secret") {
		t.Fatal("the terminal showed the secret")
	}
	ext, _ := files(t, e.Home)
	if strings.Count(ext, `"command": "plexus"`) != 2 || strings.Contains(ext, `'`) {
		t.Fatalf("the quotes were not taken off as a shell would:\n%s", ext)
	}

	x.must("send-keys", "-t", "tui", "q")
	deadline := time.Now().Add(waitFor)
	for {
		out, _ := x.run("display-message", "-p", "-t", "tui", "#{pane_dead}")
		if strings.TrimSpace(out) == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not end plexus tui:\n%s", x.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The alternate screen is gone: the terminal shows what it showed
	// before, not the last frame.
	if after := x.capture(); strings.Contains(after, "/mcp") {
		t.Fatalf("the terminal was not restored:\n%s", after)
	}
}

// TestTerminalWithoutDaemon: in a terminal but with no daemon, plexus tui
// says how to start one and leaves the screen as it was.
func TestTerminalWithoutDaemon(t *testing.T) {
	needTmux(t)
	bin := testenv.Binary(t)
	x := newTmux(t)
	x.must("new-session", "-d", "-s", "tui", "-x", "80", "-y", "24",
		"env PLEXUS_HOME="+filepath.Join(t.TempDir(), "nohome")+" "+bin+" tui; echo exit $?; sleep 60")
	s := x.waitText("the daemon is not running: start it with `plexus daemon`", "exit 1")
	if strings.Contains(s, "/mcp") {
		t.Fatalf("the screen was taken over:\n%s", s)
	}
}

// TestNeedsATerminal: without a terminal, plexus tui says what to use
// instead, and does not draw.
func TestNeedsATerminal(t *testing.T) {
	e := testenv.New(t)
	e.StartDaemon()
	r := e.Run("", "tui")
	if r.Code != 1 || !strings.Contains(r.Stderr, "needs a terminal") || r.Stdout != "" {
		t.Fatalf("plexus tui without a terminal: exit %d\nstdout: %q\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}
