package clientconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// within is where path really leads (its links followed), which must stay
// where its scope allows: a project's file within the project folder — a
// cloned repository can ship .mcp.json as a link to another program's
// credentials — and a user's file within the home or its own folder. A
// file that does not exist yet is judged by the folder it would be made
// in.
func within(path string, o Options) (string, error) {
	real, err := resolve(path)
	if err != nil {
		return "", err
	}
	roots, where := []string{o.Dir}, "the project"
	if o.Scope != ScopeProject {
		roots, where = []string{o.Home, filepath.Dir(path)}, "your home"
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			r = rr
		}
		if inside(real, filepath.Clean(r)) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%s leads to %s, outside %s: Plexus does not write through a link out of %s (replace the link with a file, or remove it)", path, real, where, where)
}

// resolve follows the links of path; for a path that does not exist yet,
// those of its nearest folder that does.
func resolve(path string) (string, error) {
	path = filepath.Clean(path)
	var rest []string
	hops := 0
	for p := path; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			// A link to nothing: where it would create the file.
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			if hops++; hops > 40 {
				return "", fmt.Errorf("%s: too many links", path)
			}
			p = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// inside reports whether path is root or under it.
func inside(path, root string) bool {
	if path == root {
		return true
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
