package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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

// TestREADMENodeVersion: the Node version the contributor's page (what the
// README's test command needs) says the conformance suite fetches is the
// one tools/conformance.sh fetches.
func TestREADMENodeVersion(t *testing.T) {
	root := RepoRoot()
	script, err := os.ReadFile(filepath.Join(root, "tools", "conformance.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`NODE_PKG_VERSION="\$\{CONFORMANCE_NODE_VERSION:-([0-9.]+)\}"`).FindSubmatch(script)
	if m == nil {
		t.Fatal("tools/conformance.sh sets no default NODE_PKG_VERSION")
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "contributing.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Node " + string(m[1]); !strings.Contains(strings.Join(strings.Fields(string(page)), " "), want) {
		t.Errorf("docs/contributing.md does not say %q, the version tools/conformance.sh installs", want)
	}
}

// TestNoMergeMarkers: no file of the repository's code, docs or scripts
// keeps the markers of a merge conflict left unresolved.
func TestNoMergeMarkers(t *testing.T) {
	marker := regexp.MustCompile(`(?m)^(<<<<<<< |>>>>>>> |=======$)`)
	keep := func(n string) bool {
		for _, ext := range []string{".go", ".md", ".sh", ".ts", ".js", ".json", ".toml", ".yaml", ".txt"} {
			if strings.HasSuffix(n, ext) {
				return true
			}
		}
		return n == "run" || n == "cross"
	}
	for _, p := range repoFiles(t, RepoRoot(), keep) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if loc := marker.FindIndex(b); loc != nil {
			line := strings.Count(string(b[:loc[0]]), "\n") + 1
			t.Errorf("%s:%d: a merge conflict's marker", p, line)
		}
	}
}
