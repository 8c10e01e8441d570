package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plexus-mcp/plexus/internal/sandbox"
)

// SandboxError is a sandbox this kernel cannot enforce: the server is not
// started.
type SandboxError struct {
	Missing []string
	// Default: the sandbox is a team replica's default, which the
	// server's settings did not ask for (sandbox.Policy.Default).
	Default bool
}

func (e *SandboxError) Error() string {
	msg := "the sandbox cannot be enforced here, so the server was not started: " + strings.Join(e.Missing, "; ")
	if e.Default {
		msg += `; a team's replica sandboxes every stdio server by default: give its pod user namespaces, or set "sandbox": false on a server you trust (docs/team.md)`
	}
	return msg
}

// sandboxReady checks that the sandbox can be enforced and creates the
// server's private folder, its working directory unless one is set.
func sandboxReady(s Spec) error {
	if len(s.Shim) == 0 {
		return errors.New("a sandboxed server needs the lifeline shim (the plexus binary), which is not configured")
	}
	if m := s.Sandbox.Missing(sandbox.Detect()); len(m) > 0 {
		return &SandboxError{Missing: m, Default: s.Sandbox.Default}
	}
	if err := sandbox.PreparePids(s.Sandbox); err != nil {
		return &SandboxError{Missing: []string{err.Error()}, Default: s.Sandbox.Default}
	}
	if err := os.MkdirAll(filepath.Dir(s.Sandbox.Private), 0o700); err != nil {
		return fmt.Errorf("sandbox: creating the private folder: %w", err)
	}
	if err := moveOldPrivate(s.Sandbox); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.Sandbox.Private, "tmp"), 0o700); err != nil {
		return fmt.Errorf("sandbox: creating the private folder: %w", err)
	}
	return nil
}

// moveOldPrivate moves a private folder kept where an earlier Plexus kept
// it (under Plexus's home, which a server must not run in) to where it is
// kept now, unless that holds one already, and removes the emptied parent.
func moveOldPrivate(p *sandbox.Policy) error {
	if p.Previous == "" {
		return nil
	}
	if _, err := os.Lstat(p.Previous); err != nil {
		return nil
	}
	if _, err := os.Lstat(p.Private); err == nil {
		return nil
	}
	if err := os.Rename(p.Previous, p.Private); err != nil {
		return fmt.Errorf("sandbox: moving the private folder out of Plexus's home: %w", err)
	}
	os.Remove(filepath.Dir(p.Previous)) // only if empty
	return nil
}

// sandboxCmd puts the launcher between the shim and the server, and the
// shim in the sandbox's namespaces: as their first process, its end ends
// every process in them. For a host:port list it starts the filtering
// proxy, whose refusals go to denied; the caller closes it (releaseSandbox)
// once the server's processes are gone, or at once if the start fails.
func sandboxCmd(cmd *exec.Cmd, s Spec, plexus, path string, denied func(string)) (*sandbox.Egress, error) {
	eg, err := sandbox.StartEgress(s.Sandbox, denied)
	if err != nil {
		return nil, err
	}
	args, err := sandbox.LauncherArgs(s.Sandbox, plexus, path, s.Argv[1:])
	if err != nil {
		eg.Close()
		return nil, err
	}
	cmd.Args = slices.Concat(s.Shim, []string{"--"}, args)
	if cmd.Dir == "" {
		cmd.Dir = s.Sandbox.Private
	}
	sandbox.Isolate(cmd.SysProcAttr, s.Sandbox)
	return eg, nil
}

// releaseSandbox removes what the sandbox made for one start once its
// processes are gone: the proxy of a host:port list, the pids cgroup of a
// root daemon's server.
func releaseSandbox(p *sandbox.Policy, eg *sandbox.Egress) {
	eg.Close()
	if p != nil {
		sandbox.ReleasePids(p)
	}
}
