package upstream

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// CommandNotFoundError says that argv[0] was found in none of the PATH
// directories (R-RUN-5).
type CommandNotFoundError struct {
	Command  string
	Searched []string // the directories, in search order
}

func (e *CommandNotFoundError) Error() string {
	// The directories go on a line of their own: a PATH is long, and the
	// first line of an error must fit a terminal.
	return fmt.Sprintf("command %q not found in PATH (%d folders searched)\nsearched PATH: %s", e.Command, len(e.Searched), strings.Join(e.Searched, ":"))
}

// searchDirs is where commands are looked up, and the PATH the server gets:
// the daemon's PATH, then the user's login-shell PATH if it is known within
// wait. A daemon started by a service manager has a thin PATH, while `npx`
// and friends live where the user's shell profile put them (and need that
// PATH to find `node` in turn). Relative entries are dropped: they would
// depend on the working directory.
//
// When asked to wait (the command was not on the daemon's PATH), the
// folders of version managers and Homebrew that exist come last
// (toolDirs): a login shell that does not answer, or whose profile sets
// PATH only for interactive shells, would leave npx out of reach.
func searchDirs(wait time.Duration) []string {
	sep := string(filepath.ListSeparator)
	list := os.Getenv("PATH") + sep + loginShellPATH(wait)
	if home, err := os.UserHomeDir(); err == nil && wait > 0 {
		list += sep + strings.Join(toolDirs("/", home, runtime.GOOS), sep)
	}
	return absDirs(list)
}

// absDirs splits a PATH list into its absolute directories, without repeats.
func absDirs(list string) []string {
	var dirs []string
	for _, d := range filepath.SplitList(list) {
		if d = filepath.Clean(d); filepath.IsAbs(d) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// resolveCommand finds the executable for argv[0]. A name with a slash is
// used as is (relative to dir); a bare name is searched in dirs.
func resolveCommand(name, dir string, dirs []string) (string, error) {
	if strings.ContainsAny(name, dirSeparators) {
		path := name
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		if err := checkExecutable(path); err != nil {
			return "", fmt.Errorf("command %q: %w", name, err)
		}
		return path, nil
	}
	for _, d := range dirs {
		for _, n := range executableNames(name) {
			path := filepath.Join(d, n)
			if checkExecutable(path) == nil {
				return path, nil
			}
		}
	}
	return "", &CommandNotFoundError{Command: name, Searched: dirs}
}

// childEnv is the server's whole environment: the daemon's passedEnv
// (HOME and TMPDIR; on Windows the profile folders and what cmd.exe and
// program lookup need), PATH as searched, and the configured values on top
// (R-RUN-1).
func childEnv(extra map[string]string, dirs []string) []string {
	env := map[string]string{"PATH": strings.Join(dirs, string(filepath.ListSeparator))}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	maps.Copy(env, extra)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// loginPATHWait bounds how long a start waits for the login shell's PATH
// when the command is not on the daemon's own PATH.
const loginPATHWait = 5 * time.Second

// loginShellPATH is the PATH of the user's login shell, or "" if it is not
// known within wait. With wait 0 it only reports an answer already known;
// otherwise it asks, once per daemon: profiles are slow (and some, like
// pyenv's, take locks), so the login shell runs only when a command is not
// on the daemon's own PATH — the case of a daemon started by a service
// manager — and the answer is kept, since it does not change under a
// running daemon.
func loginShellPATH(wait time.Duration) string {
	if wait > 0 {
		loginPATH.start()
	}
	if wait <= 0 {
		select {
		case <-loginPATH.done:
			return loginPATH.path
		default:
			return ""
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-loginPATH.done:
		return loginPATH.path
	case <-t.C:
		return ""
	}
}

var loginPATH = &shellPATH{done: make(chan struct{})}

type shellPATH struct {
	once sync.Once
	done chan struct{} // closed when path is set
	path string
}

func (l *shellPATH) start() {
	l.once.Do(func() {
		go func() {
			defer close(l.done)
			l.path = askLoginShell()
		}()
	})
}
