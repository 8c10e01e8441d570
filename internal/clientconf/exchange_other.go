//go:build !linux

package clientconf

// exchange and createNew have no single-step form here: replace compares
// the file just before it renames.
func exchange(tmp, path string) error  { return errNoSwap }
func createNew(tmp, path string) error { return errNoSwap }
