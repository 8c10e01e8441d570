package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The processes the tests start die with the test binary. A binary that
// panics on its -timeout, crashes or is killed runs no cleanup, and a daemon
// it started would live on, holding ports, temp dirs and CPU for the next
// runs. So every process the harness starts (Start, Transport):
//
//   - is started in a process group of its own (a session, if the command
//     asks for one), which is killed when the test ends, so that what the
//     command left behind goes with it;
//   - on Unix, has its group listed with the binary's keeper
//     (group_unix.go), which kills every group still listed when the
//     binary ends, however it ends;
//   - on Linux and FreeBSD, also carries the kernel's parent-death signal
//     (SIGKILL). Linux sends it when the thread that started the child ends,
//     not the process, so every child is started from one goroutine locked
//     to its thread for the life of the binary (starter_deathsig.go).
//
// A process that leaves its group (setsid) escapes all but the
// parent-death signal; OwnGroup takes on such a group once its id is known.
// On Windows a child is killed by its test's own cleanup only. A daemon's
// stdio servers are not in its group: the lifeline shim ends them when the
// daemon dies.

// Start starts cmd as a process the test owns (see above).
func Start(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	own(cmd)
	if err := onStarterThread(cmd.Start); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	keep(pid, true)
	t.Cleanup(func() { endGroup(pid) })
	return nil
}

// OwnGroup makes the test the owner of process group pgid, started by
// something else (a daemon that `plexus mcp` started in a session of its
// own): the group is killed when the test ends, and when the test binary
// dies (on Unix).
func OwnGroup(t testing.TB, pgid int) {
	keep(pgid, true)
	t.Cleanup(func() { endGroup(pgid) })
}

// Run runs cmd as a process the test owns (see Start) and waits for it,
// as cmd.Run does.
func Run(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	if err := Start(t, cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// CombinedOutput runs cmd as a process the test owns (see Start) and
// returns its stdout and stderr together, as cmd.CombinedOutput does.
func CombinedOutput(t testing.TB, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := Run(t, cmd)
	return b.Bytes(), err
}

// Transport is an mcp.CommandTransport whose command the test owns (see
// Start): the SDK starts it when the client connects.
func Transport(t testing.TB, cmd *exec.Cmd) mcp.Transport {
	return &ownedTransport{t: t, CommandTransport: mcp.CommandTransport{Command: cmd}}
}

type ownedTransport struct {
	t testing.TB
	mcp.CommandTransport
}

func (o *ownedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	own(o.Command)
	var conn mcp.Connection
	err := onStarterThread(func() error {
		var err error
		conn, err = o.CommandTransport.Connect(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	pid := o.Command.Process.Pid
	keep(pid, true)
	o.t.Cleanup(func() { endGroup(pid) })
	return conn, nil
}
