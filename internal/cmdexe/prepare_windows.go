package cmdexe

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Prepare has cmd run through cmd.exe, with CommandLine's quoting, when its
// Path is a batch file; any other command is left as it is. Never run:
// Windows is cross-compiled only.
func Prepare(cmd *exec.Cmd) error {
	if !IsBatch(cmd.Path) {
		return nil
	}
	root := os.Getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	comspec := filepath.Join(root, "System32", "cmd.exe")
	line, err := CommandLine(comspec, cmd.Path, cmd.Args[1:])
	if err != nil {
		return err
	}
	cmd.Path = comspec
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CmdLine = line
	return nil
}
