package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// passedEnv are the daemon's variables every server gets.
var passedEnv = passedEnvFor(runtime.GOOS)

// passedEnvFor lists them per system: HOME and TMPDIR on unix; on Windows
// the profile folders, and what cmd.exe, program lookup and most runtimes
// need (SystemRoot for DLLs and sockets, PATHEXT for lookup, ComSpec).
func passedEnvFor(goos string) []string {
	if goos == "windows" {
		return []string{
			"USERPROFILE", "APPDATA", "LOCALAPPDATA", "HOMEDRIVE", "HOMEPATH",
			"TEMP", "TMP", "SystemRoot", "SystemDrive", "windir", "PATHEXT", "ComSpec",
			"ProgramFiles", "ProgramFiles(x86)", "ProgramData",
		}
	}
	return []string{"HOME", "TMPDIR"}
}

// checkFile: path exists and is not a directory.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// defaultPathExt is Windows's PATHEXT when the variable is unset.
const defaultPathExt = ".COM;.EXE;.BAT;.CMD"

// withPathExt lists the names Windows would try for command name: the name
// itself if it already ends in one of pathext's extensions, else the name
// with each of them, in order.
func withPathExt(name, pathext string) []string {
	if pathext == "" {
		pathext = defaultPathExt
	}
	var exts []string
	for _, e := range strings.Split(pathext, ";") {
		if e = strings.TrimSpace(e); strings.HasPrefix(e, ".") {
			exts = append(exts, e)
		}
	}
	have := filepath.Ext(name)
	for _, e := range exts {
		if have != "" && strings.EqualFold(have, e) {
			return []string{name}
		}
	}
	out := make([]string, 0, len(exts))
	for _, e := range exts {
		out = append(out, name+strings.ToLower(e))
	}
	return out
}
