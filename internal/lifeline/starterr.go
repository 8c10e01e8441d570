package lifeline

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// commandArgs is the command of the shim's arguments ("--" path arg...);
// false, with the usage said on stderr, if there is none.
func commandArgs(args []string) ([]string, bool) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "plexus shim: usage: -- command [arg...]")
		return nil, false
	}
	return args, true
}

// ExplainStartError makes a failed start of the program at path
// actionable. The one that puzzles people is "no such file or directory"
// for a file that is there: a script whose #! interpreter is not (a
// `#!/usr/local/bin/node` written on another machine); the error then names
// the interpreter. Any other error is returned as it is.
func ExplainStartError(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, statErr := os.Stat(path); statErr != nil {
		return err
	}
	interp := interpreter(path)
	if interp == "" {
		return err
	}
	if _, statErr := os.Stat(interp); statErr == nil {
		return err
	}
	return fmt.Errorf("%w: %s is a script for %s (its #! line), which is not installed there: install it, or start the script with an interpreter that is (e.g. `node %s`)", err, path, interp, path)
}

// interpreter is the program of path's #! line, or "".
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
