package lifeline

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/plexus-mcp/plexus/internal/cmdexe"
)

// Main is the lifeline shim on Windows, with the same contract as on unix
// (args = ["--", path, arg...], the command's exit code returned). Windows
// has Job Objects instead of process groups and subreapers: the shim puts
// itself in a job that kills every process in it when its last handle
// closes, and every process the command starts joins that job. The shim
// holds the only handle, so however the shim ends — the command exited,
// the daemon terminated it, or the daemon died (the shim watches its
// parent) — the whole tree ends with it. Never run: Windows is
// cross-compiled only.
func Main(args []string) int {
	args, ok := commandArgs(args)
	if !ok {
		return 2
	}
	job, err := killOnCloseJob()
	if err != nil {
		fmt.Fprintf(os.Stderr, "plexus shim: job object: %v\n", err)
		return 1
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		fmt.Fprintf(os.Stderr, "plexus shim: job object: %v\n", err)
		return 1
	}
	go func() {
		waitParent()
		windows.TerminateJobObject(job, 1)
	}()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmdexe.Prepare(cmd); err != nil {
		fmt.Fprintf(os.Stderr, "plexus shim: %v\n", err)
		return 127
	}
	// Returning ends the shim, which closes the job: what is left of the
	// tree is killed.
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "plexus shim: %v\n", ExplainStartError(args[0], err))
		return 127
	}
}

// killOnCloseJob creates a Job Object that kills its processes when its
// last handle closes.
func killOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// waitParent returns when the shim's parent, the daemon, has exited.
func waitParent() {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(os.Getppid()))
	if err != nil {
		return // already gone
	}
	defer windows.CloseHandle(h)
	windows.WaitForSingleObject(h, windows.INFINITE)
}
