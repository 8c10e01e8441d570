package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// requirementID is a citation of docs/requirements.md: R-CAT-6, R-SES-1a,
	// or a whole section, R-AUTH.
	requirementID = regexp.MustCompile(`\bR-[A-Z]+(?:-[0-9]+[a-z]?)?\b`)
	// outsideCitation is a reference to a document that is not in the
	// repository: the product spec by section, an issue by number, or the
	// threat catalogue by its old name.
	outsideCitation = regexp.MustCompile(`SPEC §|SPEC R-|\bissue [0-9]+\b|(?:^|[^/])\bsecurity\.md`)
)

// TestCitationsResolve: every requirement id that code or docs cite is
// stated in docs/requirements.md, and nothing cites a document outside the
// repository, so that a newcomer can follow every "why" from here.
func TestCitationsResolve(t *testing.T) {
	root := RepoRoot()
	reqs, err := os.ReadFile(filepath.Join(root, "docs", "requirements.md"))
	if err != nil {
		t.Fatal(err)
	}
	stated := map[string]bool{}
	for _, id := range requirementID.FindAllString(string(reqs), -1) {
		stated[id] = true
	}
	for path, text := range sourcesAndDocs(t, root) {
		for i, line := range strings.Split(text, "\n") {
			for _, id := range requirementID.FindAllString(line, -1) {
				if !stated[id] {
					t.Errorf("%s:%d cites %s, which docs/requirements.md does not state", path, i+1, id)
				}
			}
			if m := outsideCitation.FindString(line); m != "" && !strings.HasSuffix(path, "citations_test.go") {
				t.Errorf("%s:%d cites %q, a document outside the repository", path, i+1, strings.TrimSpace(m))
			}
		}
	}
}

// sourcesAndDocs returns the module's Go files and Markdown documents by
// path relative to root.
func sourcesAndDocs(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range repoFiles(t, root, func(n string) bool { return strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".md") }) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
	}
	return out
}
