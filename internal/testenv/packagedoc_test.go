package testenv

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADocComment: each package of the module (commands
// included) says what it is for in a package comment, in one of its
// non-test files.
func TestEveryPackageHasADocComment(t *testing.T) {
	missing := packagesWithoutDoc(t, RepoRoot())
	for _, dir := range missing {
		t.Errorf("package in %s has no package comment", dir)
	}
}

// TestPackageDocCheckFindsAMissingComment holds the check above to account:
// a package without a comment is found.
func TestPackageDocCheckFindsAMissingComment(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "good", "a.go"), "// Package good is documented.\npackage good\n")
	write(t, filepath.Join(root, "good", "b.go"), "package good\n")
	write(t, filepath.Join(root, "bad", "a.go"), "package bad\n")
	write(t, filepath.Join(root, "bad", "a_test.go"), "// Package bad is documented only in a test.\npackage bad\n")
	if got := packagesWithoutDoc(t, root); len(got) != 1 || got[0] != "bad" {
		t.Errorf("packages without a comment: %v, want [bad]", got)
	}
}

// packagesWithoutDoc returns the directories under root (relative) whose
// Go package has no package comment in its non-test files.
func packagesWithoutDoc(t *testing.T, root string) []string {
	t.Helper()
	hasDoc := map[string]bool{}
	for _, p := range repoFiles(t, root, func(n string) bool { return strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") }) {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		hasDoc[dir] = hasDoc[dir] || f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != ""
	}
	var missing []string
	for dir, ok := range hasDoc {
		if !ok {
			missing = append(missing, dir)
		}
	}
	return missing
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
