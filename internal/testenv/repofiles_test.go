package testenv

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// repoFiles returns the paths of the files under root whose names keep
// accepts, leaving out hidden folders, testdata and node_modules.
func repoFiles(t *testing.T, root string, keep func(name string) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(n) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
