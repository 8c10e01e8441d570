//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// Main refuses: sandboxes are Linux's.
func Main(args []string) int {
	fmt.Fprintf(os.Stderr, "plexus sandbox: the server was not started: sandboxes need Linux; this is %s\n", runtime.GOOS)
	return 126
}
