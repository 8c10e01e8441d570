//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package cli

import (
	"errors"
	"os"
)

// errInterrupted is Ctrl-C typed at the hidden prompt.
var errInterrupted = errors.New("interrupted")

// Without termios there is no safe hidden prompt: the value must be piped.
func isTerminal(*os.File) bool   { return false }
func terminalWidth(*os.File) int { return 0 }
func readHidden(*os.File) (string, error) {
	return "", errors.New("hidden input is not supported here: pipe the value on stdin")
}
