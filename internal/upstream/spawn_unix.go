//go:build unix

package upstream

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirSeparators are the characters that make a command a path, not a name
// to look up.
const dirSeparators = "/"

// executableNames are the file names a bare command may have: itself.
func executableNames(name string) []string { return []string{name} }

// prepareSpawn has nothing to do on unix: the kernel runs scripts by their
// #! line.
func prepareSpawn(*exec.Cmd) error { return nil }

// checkExecutable: a file that this user may execute.
func checkExecutable(path string) error {
	if err := checkFile(path); err != nil {
		return err
	}
	if err := unix.Access(path, unix.X_OK); err != nil {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// askLoginShell runs `$SHELL -lc` to print PATH. It is never cut short
// while the profile runs (a killed profile can leave locks behind, as
// pyenv's rehash does), only after a generous two minutes.
func askLoginShell() string {
	shell := os.Getenv("SHELL")
	if shell == "" || !filepath.IsAbs(shell) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A marker, because profile scripts may print their own chatter.
	const marker = "__PLEXUS_PATH__="
	cmd := exec.CommandContext(ctx, shell, "-lc", `printf '\n`+marker+`%s\n' "$PATH"`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Whatever the profile started goes down with the shell.
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = 500 * time.Millisecond
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	i := bytes.LastIndex(out, []byte(marker))
	if i < 0 {
		return ""
	}
	line, _, _ := bytes.Cut(out[i+len(marker):], []byte("\n"))
	return string(line)
}
