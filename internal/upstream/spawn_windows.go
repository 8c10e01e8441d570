package upstream

import (
	"os"
	"os/exec"

	"github.com/plexus-mcp/plexus/internal/cmdexe"
)

// dirSeparators are the characters that make a command a path, not a name
// to look up.
const dirSeparators = `/\:`

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
