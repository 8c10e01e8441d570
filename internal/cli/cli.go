// Package cli is the `plexus` command line.
//
// It is a front end like the terminal UI and the web page: it reads and
// changes state only through the daemon's settings API (internal/client),
// never writes a file of Plexus, and imports nothing of the daemon
// (R-OWN-2). The one file it writes is another client's own settings, on
// `plexus connect` and `disconnect` (internal/clientconf). The
// daemon and the example server are handed in by main through Env, so that
// one binary can carry them without this package depending on them.
//
// Output rules (STYLE rule 9): stdout holds only the result; progress and
// warnings go to stderr; --json output is stable, indented JSON; a usage
// error prints one line and where the help is (STYLE rule 9) and exits 2;
// every other error says what to do next and exits 1.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/client"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// DaemonOptions are the flags of `plexus daemon`.
type DaemonOptions struct {
	// Listen is the loopback TCP address; "" for the default, "off" for none.
	Listen string
	Store  StoreOptions
	// PeerListen and PeerAdvertise are the internal channel between the
	// replicas of a team: its listening address, and the HOST:PORT the
	// others dial ("" for PeerListen's).
	PeerListen, PeerAdvertise string
	// StopDelay is how long a stopping daemon stays out of rotation,
	// serving, before it hands its servers over and stops.
	StopDelay time.Duration
	// MetricsListen serves GET /metrics alone, without a token.
	MetricsListen string
}

// StoreOptions name a database store: its URL and the files of its keys.
type StoreOptions struct {
	URL         string
	KeyFile     string
	OldKeyFiles []string
	URLFile     string
	Bootstrap   string
}

// MigrateOptions are the flags of `plexus store migrate`.
type MigrateOptions struct {
	From, To string
	// Keys of the database side; URL is unused.
	Keys  StoreOptions
	Force bool
}

// Env is what the command line gets from its process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// RunDaemon runs the daemon in the foreground until ctx ends.
	RunDaemon func(ctx context.Context, opts DaemonOptions) error
	// RunExampleServer runs the bundled example MCP server on stdio.
	RunExampleServer func(ctx context.Context) error
	// MigrateStore copies a home or a database store to another and
	// returns what it copied, for people.
	MigrateStore func(ctx context.Context, opts MigrateOptions) (string, error)
}

// Run runs the command line args (without the program name) and returns the
// process exit code.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	a := &app{env: env}
	return a.run(ctx, args)
}

// run runs args in a (set up by Run, or by a test with its own clock).
func (a *app) run(ctx context.Context, args []string) int {
	env := a.env
	root := a.rootCommand()
	if len(args) == 0 {
		// A bare `plexus` is a usage error, like any missing argument.
		root.InitDefaultHelpCmd()
		root.InitDefaultCompletionCmd()
		fmt.Fprintf(env.Stderr, "plexus: give a command, such as `plexus status`\n%s\n", usageHint(root))
		return ExitUsage
	}
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	a.jsonErrors = wantsJSON(cmd) || argsWantJSON(args)
	return a.report(cmd, err)
}

// app is one invocation: the environment and the state shared by commands.
type app struct {
	env Env
	// started is set once cobra has parsed flags and checked arguments and
	// a command begins to run. Any error before that is a usage error, which
	// is how cobra's own errors (unknown command, unknown flag, wrong number
	// of arguments) are told apart from failures.
	started bool
	cl      *client.Client
	// jsonErrors prints the error as JSON: the command line asked for --json.
	jsonErrors bool
	// loginJSON prints the end of `plexus login` as JSON.
	loginJSON bool
	// clock, when set, stands in for time.Now in relative times
	// ("backoff 4s", uptime), so that tests can stop it.
	clock func() time.Time
}

// now is the time relative times are measured from.
func (a *app) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// client returns the daemon's client, created on first use so that commands
// that do not talk to the daemon (help, daemon) do not need a home.
func (a *app) client() (*client.Client, error) {
	if a.cl == nil {
		home, err := client.Home()
		if err != nil {
			return nil, err
		}
		a.cl = client.New(home)
	}
	return a.cl, nil
}

func (a *app) stdout() io.Writer { return a.env.Stdout }
func (a *app) stderr() io.Writer { return a.env.Stderr }

// warnf prints a warning for people; never part of the result.
func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.env.Stderr, "warning: "+format+"\n", args...)
}

// progressf tells people what is happening during long work (R-UI-4).
func (a *app) progressf(format string, args ...any) {
	fmt.Fprintf(a.env.Stderr, format+"\n", args...)
}

// progressDelay is how long a request runs before progressAfter speaks. A
// variable so that tests need not wait: zero speaks at once.
var progressDelay = time.Second

// progressAfter prints a progress line if the work outlasts progressDelay,
// so that quick answers (and failures such as "the daemon is not running")
// are not preceded by a claim of work that never started. The returned stop
// must be called when the work ends; after it returns nothing more is
// printed.
func (a *app) progressAfter(format string, args ...any) (stop func()) {
	if progressDelay <= 0 {
		// Said before the work starts, not raced against its end.
		a.progressf(format, args...)
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(progressDelay)
		defer t.Stop()
		select {
		case <-t.C:
			a.progressf(format, args...)
		case <-done:
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// report prints err and returns the exit code it calls for.
func (a *app) report(cmd *cobra.Command, err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			a.printError(ee.err, false)
		}
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) || !a.started {
		if a.jsonErrors {
			a.reportJSON(err, true)
		} else {
			fmt.Fprintf(a.env.Stderr, "plexus: %s\n%s\n", err, usageHint(cmd))
		}
		return ExitUsage
	}
	a.printError(err, false)
	return ExitError
}

// usageHint is the one line after a usage error: where the rest is, not
// the 50 lines of it.
func usageHint(cmd *cobra.Command) string {
	return fmt.Sprintf("Usage: %s (`%s --help` for the rest)", cmd.UseLine(), cmd.CommandPath())
}

// printError prints err once, for people or as JSON.
func (a *app) printError(err error, usage bool) {
	if a.jsonErrors {
		a.reportJSON(err, usage)
		return
	}
	fmt.Fprintf(a.env.Stderr, "plexus: %s\n", a.explain(err))
}

// usageError is a mistake in the command line: it prints the usage, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError ends the command with code after the command has already told
// the user what went wrong (err is nil), or with err explained as usual.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }
