//go:build !unix

package mcpbridge

import "os"

// pollable returns f: elsewhere than on unix, stdin and stdout are read
// and written as they are.
func pollable(f *os.File) (*os.File, func()) { return f, func() {} }
