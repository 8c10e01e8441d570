package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
)

// Daemon is a Plexus daemon this package started on a temporary home.
type Daemon struct {
	Bin, Home string
	PID       int
	HTTPAddr  string
	// Ready is the time from starting the process to its API answering.
	Ready time.Duration

	token    string
	dir      string
	started  time.Time
	stopOnce sync.Once
	keepDir  bool // Stop leaves dir: another daemon starts on the same home
	cmd      *exec.Cmd
	done     chan error
	out      *lockedBuffer
}

// StartDaemon writes a configuration with servers (each the argv of a stdio
// server, named s1, s2, …) and the face's external calls on, starts `bin
// daemon` on it with a loopback listener on a free port, and waits until
// its API answers. The servers are still starting: see WaitServers.
func StartDaemon(ctx context.Context, bin string, servers [][]string) (*Daemon, error) {
	dir, err := os.MkdirTemp("", "plexus-load-")
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	if err := writeConfig(home, servers); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return startDaemonIn(ctx, bin, dir, home)
}

// startDaemonIn starts `bin daemon` on home, a folder in dir (which Stop
// removes unless keepDir is set), and waits until its API answers.
func startDaemonIn(ctx context.Context, bin, dir, home string) (*Daemon, error) {
	d := &Daemon{Bin: bin, Home: home, dir: dir, done: make(chan error, 1), out: &lockedBuffer{}}
	d.cmd = exec.Command(bin, "daemon", "--listen", "127.0.0.1:0")
	d.cmd.Env = append(os.Environ(), "PLEXUS_HOME="+d.Home)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the daemon %s: %w", bin, err)
	}
	d.PID = d.cmd.Process.Pid
	go func() { d.done <- d.cmd.Wait() }()
	st, err := d.waitAPI(ctx)
	if err != nil {
		d.Stop()
		return nil, err
	}
	d.Ready = time.Since(d.started)
	d.HTTPAddr = st.HTTPAddr
	tok, err := os.ReadFile(filepath.Join(d.Home, "token"))
	if err != nil {
		d.Stop()
		return nil, fmt.Errorf("reading the daemon's token: %w", err)
	}
	d.token = strings.TrimSpace(string(tok))
	return d, nil
}

// writeConfig makes the home (0700) and its extensions.json.
func writeConfig(home string, servers [][]string) error {
	type server struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args,omitempty"`
	}
	cfg := map[string]map[string]any{"mcp": {"face": map[string]bool{"allowExternalCall": true}}}
	m := map[string]server{}
	for i, argv := range servers {
		if len(argv) == 0 {
			return errors.New("a server with an empty command")
		}
		m[fmt.Sprintf("s%d", i+1)] = server{Type: "stdio", Command: argv[0], Args: argv[1:]}
	}
	cfg["mcp"]["servers"] = m
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, "extensions.json"), b, 0o600)
}

// apiWait is how long waitAPI waits for a started daemon's API: a
// race-built daemon on a loaded machine (the race run of the tests, at a
// load of 30) has taken more than 30 s.
const apiWait = 60 * time.Second

// waitAPI polls the daemon's status over its socket until it answers.
// An attempt is not cut short: before the daemon listens one fails at
// once (no socket yet), and after, its answer may be slow on a loaded
// machine (the daemon is still setting up, and its first status probes
// the sandbox's features with a child process): an attempt cut at a
// second would throw that answer away, and every later one as slow.
func (d *Daemon) waitAPI(ctx context.Context) (*apitype.Status, error) {
	c := client.New(d.Home)
	deadline := time.Now().Add(apiWait)
	for {
		sctx, cancel := context.WithDeadline(ctx, deadline)
		st, err := c.Status(sctx)
		cancel()
		if err == nil {
			return st, nil
		}
		select {
		case werr := <-d.done:
			d.done <- werr
			return nil, fmt.Errorf("the daemon exited (%v):\n%s", werr, d.out.String())
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon's API did not answer within %s: %w\n%s", apiWait, err, d.out.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// WaitServers waits until every configured server is ready with its tools
// counted, and returns the time since the daemon's process started. A
// server that fails is an error. A server shows ready once its catalog is
// published; the tool count is checked too, as the servers here are
// copies of one server whose tool the caller means to call: one with no
// tools is not the server meant.
func (d *Daemon) WaitServers(ctx context.Context) (time.Duration, error) {
	c := client.New(d.Home)
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.Status(ctx)
		if err != nil {
			return 0, fmt.Errorf("daemon status: %w", err)
		}
		ready := 0
		for _, s := range st.Servers {
			switch s.State {
			case apitype.StateReady:
				if s.Tools > 0 {
					ready++
				}
			case apitype.StateFailed, apitype.StateBackoff:
				return 0, fmt.Errorf("server %s: %s: %s", s.Name, s.State, s.LastError)
			}
		}
		if ready == len(st.Servers) {
			return time.Since(d.started), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d servers ready with tools after 60s", ready, len(st.Servers))
		}
		time.Sleep(time.Millisecond)
	}
}

// FaceURL is the daemon's MCP face over HTTP (the default profile).
func (d *Daemon) FaceURL() string { return "http://" + d.HTTPAddr + "/mcp" }

// Auth is the header the face wants: the daemon's token. It is a secret:
// never print it.
func (d *Daemon) Auth() http.Header {
	return http.Header{"Authorization": {"Bearer " + d.token}}
}

// Stop ends the daemon (SIGTERM, then SIGKILL after 20 s) and removes its
// home.
func (d *Daemon) Stop() {
	d.stopOnce.Do(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			d.cmd.Process.Kill()
			<-d.done
		}
		if !d.keepDir {
			os.RemoveAll(d.dir)
		}
	})
}

// Output is what the daemon printed (its log).
func (d *Daemon) Output() string { return d.out.String() }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // a daemon log, not a memory leak
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// WaitTool waits until the face lists tool (as Run resolves it) and at
// least as many tools as the servers' status counts: the face learns of a
// server's catalog a little after the server is ready.
func (d *Daemon) WaitTool(ctx context.Context, tool, server string) error {
	st, err := client.New(d.Home).Status(ctx)
	if err != nil {
		return fmt.Errorf("daemon status: %w", err)
	}
	want := 0
	for _, s := range st.Servers {
		want += s.Tools
	}
	t := Target{URL: d.FaceURL(), Header: d.Auth(), Protocol: Protocol2026}
	hc := httpClient(t.Header, 1)
	defer hc.CloseIdleConnections()
	cs, _, err := t.open(ctx, hc, 1)
	if err != nil {
		return err
	}
	defer cs.close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tools, err := cs.tools(ctx)
		if err != nil {
			return fmt.Errorf("tools/list on the face: %w", err)
		}
		_, err = resolveTool(tools, tool, server)
		if err == nil && len(tools) < want {
			err = fmt.Errorf("%d tools listed, the servers have %d", len(tools), want)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the face, 30s after its servers were ready: %w", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
