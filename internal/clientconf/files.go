package clientconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// maxFile bounds a client's settings file; real ones are far smaller
// (Claude Code's ~/.claude.json, the largest, holds its history too).
const maxFile = 64 << 20

// Plan is one connect or disconnect worked out and not yet written.
type Plan struct {
	Client string `json:"client"`
	Title  string `json:"title"`
	// Path is the client's file (a link is followed to its target).
	Path string `json:"path"`
	// Exists is whether the file is there already.
	Exists bool `json:"exists"`
	// Changed is false when the file already says what it should.
	Changed bool   `json:"changed"`
	Before  []byte `json:"-"`
	After   []byte `json:"-"`
	mode    fs.FileMode
}

// Prepare reads the client's file and works out the edit.
func Prepare(name string, o Options, connect bool) (*Plan, error) {
	path, err := Path(name, o)
	if err != nil {
		return nil, err
	}
	p := &Plan{Client: name, Title: Title(name), Path: path, mode: 0o600}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		p.Path = real
	}
	info, err := os.Stat(p.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", p.Path)
	case info.Size() > maxFile:
		return nil, fmt.Errorf("%s is larger than %d MiB: not a settings file", p.Path, maxFile>>20)
	default:
		p.Exists, p.mode = true, info.Mode().Perm()
		if p.Before, err = os.ReadFile(p.Path); err != nil {
			return nil, err
		}
	}
	if !p.Exists && !connect {
		return p, nil
	}
	p.After, err = Edit(name, p.Before, o.Command, connect)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	p.Changed = string(p.After) != string(p.Before)
	return p, nil
}

// Diff is the change as a unified diff; "" if there is none.
func (p *Plan) Diff() string {
	if !p.Changed {
		return ""
	}
	from := p.Path
	if !p.Exists {
		from = "/dev/null"
	}
	lines := func(b []byte) []string {
		if len(b) == 0 {
			return nil
		}
		return difflib.SplitLines(string(b))
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(p.Before), B: lines(p.After),
		FromFile: from, ToFile: p.Path, Context: 3,
	})
	return d
}

// Write saves the edit: the file as it was goes to a backup beside it
// (named with the time; a second edit in the same second gets a name of its
// own rather than replacing the first one's backup), then the new text replaces it atomically, with
// the file's mode kept. It returns the backup's path ("" for a new file).
func (p *Plan) Write(now time.Time) (backup string, err error) {
	if !p.Changed {
		return "", nil
	}
	if p.Exists {
		backup = freeBackupName(p.Path + ".plexus-backup-" + now.UTC().Format("20060102T150405Z"))
		if err := atomicfile.WriteFile(backup, p.Before, p.mode); err != nil {
			return "", fmt.Errorf("keeping a backup: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(p.Path, p.After, p.mode); err != nil {
		return backup, err
	}
	return backup, nil
}

// freeBackupName returns name, or name-2, name-3… if name is taken: two
// edits in one second of the clock must not leave only the second backup,
// which would lose the file as it was before the first.
func freeBackupName(name string) string {
	free := name
	for i := 2; ; i++ {
		if _, err := os.Lstat(free); err != nil {
			return free // free, or a problem the write itself will report
		}
		free = fmt.Sprintf("%s-%d", name, i)
	}
}
