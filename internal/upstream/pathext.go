package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkFile: path exists and is not a directory.
func checkFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// defaultPathExt is Windows's PATHEXT when the variable is unset.
const defaultPathExt = ".COM;.EXE;.BAT;.CMD"

// withPathExt lists the names Windows would try for command name: the name
// itself if it already ends in one of pathext's extensions, else the name
// with each of them, in order.
func withPathExt(name, pathext string) []string {
	if pathext == "" {
		pathext = defaultPathExt
	}
	var exts []string
	for _, e := range strings.Split(pathext, ";") {
		if e = strings.TrimSpace(e); strings.HasPrefix(e, ".") {
			exts = append(exts, e)
		}
	}
	have := filepath.Ext(name)
	for _, e := range exts {
		if have != "" && strings.EqualFold(have, e) {
			return []string{name}
		}
	}
	out := make([]string, 0, len(exts))
	for _, e := range exts {
		out = append(out, name+strings.ToLower(e))
	}
	return out
}
