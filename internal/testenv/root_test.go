package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootOnlyTestsSayRootByName: a test that needs root calls NeedRoot and
// is named …AsRoot, so that a normal user sees it skipped with its reason
// and can tell the root-only tests by name; none tests the uid itself.
func TestRootOnlyTestsSayRootByName(t *testing.T) {
	root := RepoRoot()
	fset := token.NewFileSet()
	found := 0
	for _, p := range repoFiles(t, root, func(n string) bool { return strings.HasSuffix(n, "_test.go") }) {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			needs, uid := false, false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					switch x.Sel.Name {
					case "NeedRoot":
						needs = true
					case "Geteuid", "Getuid":
						uid = true
					}
				case *ast.Ident:
					if x.Name == "NeedRoot" {
						needs = true
					}
				}
				return true
			})
			name := fn.Name.Name
			if needs {
				found++
				if !strings.HasPrefix(name, "Test") || !strings.HasSuffix(name, "AsRoot") {
					t.Errorf("%s: %s needs root but is not named Test…AsRoot", rel, name)
				}
			}
			if uid && strings.HasPrefix(name, "Test") && !needs {
				t.Errorf("%s: %s looks at the uid itself; a test that needs root calls testenv.NeedRoot", rel, name)
			}
		}
	}
	if found == 0 {
		t.Error("no test calls NeedRoot: the check finds nothing to check")
	}
}
