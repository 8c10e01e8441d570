package upstream

import (
	"os"
	"os/exec"

	"github.com/plexus-mcp/plexus/internal/cmdexe"
)

// dirSeparators are the characters that make a command a path, not a name
// to look up.
const dirSeparators = `/\:`

// passedEnv are the daemon's variables every server gets: the profile
// folders, and what cmd.exe, program lookup and most runtimes need
// (SystemRoot for DLLs and sockets, PATHEXT for lookup, ComSpec).
var passedEnv = []string{
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "HOMEDRIVE", "HOMEPATH",
	"TEMP", "TMP", "SystemRoot", "SystemDrive", "windir", "PATHEXT", "ComSpec",
	"ProgramFiles", "ProgramFiles(x86)", "ProgramData",
}

// executableNames are the file names a bare command may have: with each
// extension of PATHEXT ("npx" is npx.cmd).
func executableNames(name string) []string {
	return withPathExt(name, os.Getenv("PATHEXT"))
}

// prepareSpawn has a batch file run through cmd.exe, quoted for it.
func prepareSpawn(cmd *exec.Cmd) error { return cmdexe.Prepare(cmd) }

// checkExecutable: on Windows a file is runnable by its extension, which
// executableNames has chosen.
func checkExecutable(path string) error { return checkFile(path) }

// askLoginShell: Windows has no login shell; its PATH is the registry's,
// which every process inherits.
func askLoginShell() string { return "" }
