package upstream

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/plexus-mcp/plexus/internal/lifeline"
	"github.com/plexus-mcp/plexus/internal/sandbox"
)

// process is a started stdio server: the leader of its own process group.
// It is started by hand rather than with mcp.CommandTransport, because that
// signals only the child, not its group, and hides the child's exit behind
// the stdout pipe.
type process struct {
	cmd    *exec.Cmd
	pid    int // also the process group id
	grace  time.Duration
	onExit func(*ExitError) // called once, from the watchExit goroutine
	// viaShim: the leader is the lifeline shim, which reports a server
	// killed by signal n as exit code 128+n.
	viaShim bool

	// mu guards isReaped. Signals to the group are sent under mu and only
	// while the leader is not reaped: until then its pid, hence the group id,
	// cannot be reused by an unrelated process.
	mu       sync.Mutex
	isReaped bool

	exited   chan struct{} // closed once the leader is reaped; exitErr and exitedAt are set before
	exitErr  *ExitError
	exitedAt time.Time     // when the leader's exit was seen, before the reap
	reaped   chan struct{} // closed once the leader is reaped and the rest of its group is gone

	sandbox *sandbox.Policy // nil unless sandboxed
	egress  *sandbox.Egress // the proxy of a host:port list, or nil

	stderr     *os.File // our read end of the server's stderr
	stderrDone chan struct{}
}

// pipes are our ends of the server's stdin and stdout.
type pipes struct {
	stdin  *os.File
	stdout *os.File
}

// startProcess resolves and starts the server described by s. stderr lines go
// to ring. On error nothing is left running. The caller must call watch.
func startProcess(s Spec, ring *lineRing, red *redactor, log *slog.Logger) (*process, pipes, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, pipes{}, errors.New("no command given")
	}
	if s.Sandbox != nil {
		pol := *s.Sandbox // this start's own: PreparePids sets a field
		s.Sandbox = &pol
		if err := sandboxReady(s); err != nil {
			return nil, pipes{}, err
		}
	}
	if s.Dir != "" {
		fi, err := os.Stat(s.Dir)
		if err != nil {
			return nil, pipes{}, fmt.Errorf("working directory %q: %w", s.Dir, err)
		}
		if !fi.IsDir() {
			return nil, pipes{}, fmt.Errorf("working directory %q is not a directory", s.Dir)
		}
	}
	dirs := searchDirs(0)
	lookupIn := func(dirs []string) []string {
		if p, ok := s.Env["PATH"]; ok {
			// A configured PATH is the server's; look there first.
			return slices.Concat(absDirs(p), dirs)
		}
		return dirs
	}
	path, err := resolveCommand(s.Argv[0], s.Dir, lookupIn(dirs))
	var nf *CommandNotFoundError
	if errors.As(err, &nf) {
		// Not on the daemon's PATH: it may be where the user's login shell
		// would find it, once that lookup has answered.
		dirs = searchDirs(loginPATHWait)
		path, err = resolveCommand(s.Argv[0], s.Dir, lookupIn(dirs))
	}
	if err != nil {
		return nil, pipes{}, err
	}
	var eg *sandbox.Egress
	cmd := &exec.Cmd{
		Path: path,
		Args: slices.Clone(s.Argv),
		Env:  childEnv(s.Env, dirs),
		Dir:  s.Dir,
		// Pdeathsig reaches only this child; the shim exists to pass the
		// daemon's death on to the whole group.
		SysProcAttr: lifeline.GroupAttr(syscall.SIGKILL),
	}
	if len(s.Shim) > 0 {
		shimPath, err := resolveCommand(s.Shim[0], "", dirs)
		if err != nil {
			return nil, pipes{}, fmt.Errorf("lifeline shim: %w", err)
		}
		cmd.Path = shimPath
		cmd.Args = slices.Concat(s.Shim, []string{"--", path}, s.Argv[1:])
		// SIGTERM, not SIGKILL: the shim must live long enough to end the group.
		cmd.SysProcAttr = lifeline.GroupAttr(syscall.SIGTERM)
		if s.Sandbox != nil {
			// Set before the sandbox's egress proxy starts, which adds
			// its lines from a goroutine of its own.
			ring.explain = s.Sandbox.Explain
			// A refusal is the server's own log line (not the daemon's:
			// the server decides how many there are).
			if eg, err = sandboxCmd(cmd, s, shimPath, path, ring.add); err != nil {
				releaseSandbox(s.Sandbox, nil)
				return nil, pipes{}, err
			}
		}
	}

	// A batch file (npx.cmd) runs through cmd.exe, quoted for it (Windows).
	if err := prepareSpawn(cmd); err != nil {
		return nil, pipes{}, err
	}

	var files []*os.File // every pipe end, for cleanup on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		for _, f := range files {
			f.Close()
		}
		releaseSandbox(s.Sandbox, eg)
		return nil, pipes{}, fmt.Errorf("creating pipes: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	// The child has its copies now (or never will); keeping ours would hide
	// the server's end of stdout and stderr.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		releaseSandbox(s.Sandbox, eg)
		return nil, pipes{}, fmt.Errorf("starting %s: %w", path, lifeline.ExplainStartError(path, err))
	}

	p := &process{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		grace:      s.StopGrace,
		viaShim:    len(s.Shim) > 0,
		sandbox:    s.Sandbox,
		egress:     eg,
		exited:     make(chan struct{}),
		reaped:     make(chan struct{}),
		stderr:     errR,
		stderrDone: make(chan struct{}),
	}
	go func() {
		defer close(p.stderrDone)
		readStderr(errR, ring, red, log)
	}()
	log.Debug("server process started", "pid", p.pid, "path", path, "shim", len(s.Shim) > 0)
	return p, pipes{stdin: inW, stdout: outR}, nil
}

// watch starts watching the process; onExit is called once it has exited
// and been reaped.
func (p *process) watch(onExit func(*ExitError)) {
	p.onExit = onExit
	go p.watchExit()
}

// watchExit waits for the leader to exit, reports it, and cleans up the rest
// of the group: a grandchild holding stdout open must neither hide the exit
// nor outlive it.
func (p *process) watchExit() {
	defer close(p.reaped)
	defer releaseSandbox(p.sandbox, p.egress)
	zombie := lifeline.WaitExitedNoReap(p.pid)
	p.exitedAt = time.Now()
	if zombie {
		// The leader is a zombie, so the group id is still ours: tell what is
		// left of the group to go before reaping.
		p.signal(syscall.SIGTERM)
	}
	p.mu.Lock()
	p.cmd.Wait()
	p.isReaped = true
	p.mu.Unlock()
	p.exitErr = exitErrorOf(p.cmd.ProcessState, p.viaShim)
	close(p.exited)
	if p.onExit != nil {
		p.onExit(p.exitErr)
	}
	// Past this point the group id stays ours only while a live member
	// holds it, which is exactly when waitGroupGone says false.
	if !zombie {
		lifeline.SignalGroup(p.pid, syscall.SIGTERM)
	}
	if !lifeline.WaitGroupGone(p.pid, p.grace) {
		lifeline.SignalGroup(p.pid, syscall.SIGKILL)
		lifeline.WaitGroupGone(p.pid, p.grace)
	}
}

// signal sends sig to the whole process group while the leader is unreaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isReaped {
		lifeline.SignalGroup(p.pid, sig)
	}
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *process) waitExited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the process group and waits until it is reaped. The caller has
// already closed the server's stdin.
func (p *process) stop(grace time.Duration) {
	if !p.waitExited(grace) {
		p.signal(syscall.SIGTERM)
		if !p.waitExited(grace) {
			p.signal(syscall.SIGKILL)
		}
	}
	<-p.reaped
	// Every writer of stderr is normally gone now; a process that left the
	// group could still hold it, so do not wait for EOF forever.
	t := time.NewTimer(grace)
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	t.Stop()
	p.stderr.Close()
	<-p.stderrDone
}

func exitErrorOf(st *os.ProcessState, viaShim bool) *ExitError {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &ExitError{Code: -1, Signal: lifeline.SignalName(ws.Signal())}
	}
	code := st.ExitCode()
	if viaShim && code > 128 && code < 128+65 {
		if name := lifeline.SignalName(syscall.Signal(code - 128)); name != "" {
			return &ExitError{Code: -1, Signal: name}
		}
	}
	return &ExitError{Code: code}
}
