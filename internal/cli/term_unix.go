//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import (
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// errInterrupted is Ctrl-C typed at the hidden prompt.
var errInterrupted = errors.New("interrupted")

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// terminalWidth returns the width of terminal f, or 0 if f is not one.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// readHidden reads one line from terminal f without echo.
//
// The terminal is put in non-canonical mode with signals off, and line
// editing is done here: with signals on, Ctrl-C would end the process (or,
// with main's signal handling, leave this read blocked) before the terminal
// is restored, leaving the user's shell without echo.
func readHidden(f *os.File) (string, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return "", err
	}
	raw := *old
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
		return "", err
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old) //nolint:errcheck // best effort on the way out

	var line []byte
	// The typed secret is wiped from this buffer on return; the string
	// handed back is the one copy.
	defer func() { clear(line) }()
	var b [1]byte
	for {
		n, err := f.Read(b[:])
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				if len(line) > 0 {
					return string(line), nil
				}
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		switch c := b[0]; c {
		case '\r', '\n':
			return string(line), nil
		case 0x03: // Ctrl-C
			return "", errInterrupted
		case 0x04: // Ctrl-D: end of input on an empty line, as in a shell
			if len(line) == 0 {
				return "", io.ErrUnexpectedEOF
			}
		case 0x7f, 0x08: // backspace: remove a whole character
			if len(line) > 0 {
				_, size := utf8.DecodeLastRune(line)
				clear(line[len(line)-size:])
				line = line[:len(line)-size]
			}
		case 0x15: // Ctrl-U: start over
			clear(line)
			line = line[:0]
		default:
			if c >= 0x20 || c == '\t' {
				line = append(line, c)
			}
		}
	}
}
