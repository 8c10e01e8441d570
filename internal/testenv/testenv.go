// Package testenv is the harness of the end-to-end tests: it builds the real
// plexus binary once per source state (shared by every test package, and
// race- or cover-built when the tests are), runs a daemon on a temporary home,
// runs CLI commands against it, and provides real MCP servers installed
// from the npm registry.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
)

// RepoRoot returns the module's root directory.
func RepoRoot() string {
	if repoRootErr != nil {
		panic("testenv: " + repoRootErr.Error())
	}
	return repoRoot
}

// repoRoot is found once, before any test can change the directory; a
// test binary run as a helper elsewhere (a fake server in a temp dir)
// finds none, and fails only if it asks.
var repoRoot, repoRootErr = findRepoRoot()

// findRepoRoot finds the module's root from this file's path, or, when the
// test binary is built with -trimpath (which leaves the path relative to
// the module, so that clean clones in other folders share the build
// cache), from the directory go test runs it in: its package's.
func findRepoRoot() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	if filepath.IsAbs(file) {
		return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+strings.TrimSuffix(Module, "/")+"\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod of " + Module + " above " + dir)
		}
	}
}

// Binary builds cmd/plexus (see BuildCommand) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "./cmd/plexus")
}

// Env is one temporary Plexus home with, optionally, a daemon running on it.
type Env struct {
	t    testing.TB
	Home string
	Bin  string
	// ExtraEnv is added to the environment of the daemon and every command.
	ExtraEnv []string
	// DaemonArgs are added to `plexus daemon`'s (a database store, say).
	DaemonArgs []string
	// DaemonWrap, if set, runs the daemon: its argv, to which the
	// daemon's own is added (a shell that sets limits, then execs).
	DaemonWrap []string

	daemon    *exec.Cmd
	daemonOut *SyncBuffer
	waitErr   chan error
}

// New returns an Env with a fresh home. The home's parent is private, so the
// daemon creates the home itself, as on a fresh machine. The parent is a
// short name in the temporary folder, not t.TempDir(), whose name carries
// the test's (up to 64 bytes): the daemon's socket in it must fit a unix
// socket's 108 bytes however long the test's name and TMPDIR are.
func New(t testing.TB) *Env {
	t.Helper()
	parent, err := os.MkdirTemp("", "px")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(parent); err != nil {
			t.Errorf("removing the home's folder: %v", err)
		}
	})
	return &Env{t: t, Home: filepath.Join(parent, "plexus-home"), Bin: Binary(t)}
}

func (e *Env) environ() []string {
	env := append(os.Environ(), "PLEXUS_HOME="+e.Home)
	return append(env, e.ExtraEnv...)
}

// StartDaemon starts `plexus daemon` and waits until its API answers. The
// daemon is stopped (SIGTERM, then waited for) when the test ends.
func (e *Env) StartDaemon() {
	e.t.Helper()
	// A free port of its own: tests run many daemons at once.
	argv := append([]string{e.Bin, "daemon", "--listen", "127.0.0.1:0"}, e.DaemonArgs...)
	argv = append(append([]string{}, e.DaemonWrap...), argv...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = e.environ()
	e.daemonOut = &SyncBuffer{}
	cmd.Stdout = e.daemonOut
	cmd.Stderr = e.daemonOut
	if err := Start(e.t, cmd); err != nil {
		e.t.Fatal(err)
	}
	e.daemon = cmd
	e.waitErr = make(chan error, 1)
	go func() { e.waitErr <- cmd.Wait() }()
	e.t.Cleanup(e.StopDaemon)
	// Generous: a race-built daemon on a loaded machine (the race run
	// beside the end-to-end tests) is many times slower to start.
	e.WaitReady(60 * time.Second)
}

// WaitReady polls the API until it answers, for at most d. An attempt is
// not cut short: before the daemon listens it fails at once (no socket),
// and after, a slow answer of a loaded machine is still its answer.
func (e *Env) WaitReady(d time.Duration) {
	e.t.Helper()
	c := client.New(e.Home)
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_, err := c.Status(ctx)
		cancel()
		if err == nil {
			return
		}
		select {
		case werr := <-e.waitErr:
			e.daemon = nil // gone: nothing for StopDaemon to wait for
			e.t.Fatalf("daemon exited: %v\n%s", werr, e.daemonOut)
		default:
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("daemon not ready after %s: %v\n%s", d, err, e.daemonOut)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// DaemonPID returns the running daemon's pid.
func (e *Env) DaemonPID() int { return e.daemon.Process.Pid }

// DaemonOutput returns what the daemon printed so far.
func (e *Env) DaemonOutput() string { return e.daemonOut.String() }

// StopDaemon sends SIGTERM and waits for the daemon to exit. The test
// fails if the daemon exits with an error or reported a data race.
func (e *Env) StopDaemon() {
	if e.daemon == nil {
		return
	}
	e.daemon.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-e.waitErr:
	case <-time.After(20 * time.Second):
		e.daemon.Process.Kill()
		err = <-e.waitErr
		e.t.Errorf("daemon did not stop within 20s of SIGTERM\n%s", e.daemonOut)
	}
	e.daemon = nil
	if err != nil {
		e.t.Errorf("daemon exited after SIGTERM with %v\n%s", err, e.daemonOut)
	} else {
		e.checkRaces("the daemon", e.daemonOut.String())
	}
}

// KillDaemon sends SIGKILL and waits for the daemon to be gone. The test
// fails if the daemon had reported a data race.
func (e *Env) KillDaemon() {
	e.daemon.Process.Kill()
	<-e.waitErr
	e.daemon = nil
	e.checkRaces("the daemon", e.daemonOut.String())
}

// raceReport is how the race detector starts each report.
const raceReport = "WARNING: DATA RACE"

// checkRaces fails the test if out holds a race detector report.
func (e *Env) checkRaces(who, out string) {
	e.t.Helper()
	if strings.Contains(out, raceReport) {
		e.t.Errorf("%s reported a data race:\n%s", who, out)
	}
}

// Start starts cmd as a process the env's test owns (see the package
// function Start).
func (e *Env) Start(cmd *exec.Cmd) error { return Start(e.t, cmd) }

// Result is what a CLI command did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs `plexus args...` with stdin and returns its output and exit code.
func (e *Env) Run(stdin string, args ...string) Result {
	e.t.Helper()
	return e.run(stdin, "plexus "+strings.Join(args, " "), func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, e.Bin, args...)
		cmd.Env = e.environ()
		return cmd
	})
}

// run runs the command made by mk (what names it) with stdin and a time
// limit, and fails the test if it cannot run or reports a data race.
func (e *Env) run(stdin, what string, mk func(context.Context) *exec.Cmd) Result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := mk(ctx)
	// A child that outlives the command and holds its output open must not
	// hold the test past the time limit too.
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := Start(e.t, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	res := Result{Stdout: out.String(), Stderr: errb.String()}
	e.checkRaces(what, res.Stderr)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		e.t.Fatalf("running %s: %v", what, err)
	}
	return res
}

// MustRun runs a command and fails the test unless it exits 0.
func (e *Env) MustRun(args ...string) string {
	e.t.Helper()
	r := e.Run("", args...)
	if r.Code != 0 {
		e.t.Fatalf("plexus %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// Shell runs line with sh -c, as a person would type it, with the test's
// plexus binary first on PATH (as `go install` would put it) and the
// home's environment, and returns its output and exit code.
func (e *Env) Shell(stdin, line string) Result {
	e.t.Helper()
	return e.run(stdin, line, func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Env = append(e.environ(), "PATH="+filepath.Dir(e.Bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		return cmd
	})
}
