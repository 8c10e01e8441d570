package clientconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// maxFile bounds a client's settings file; real ones are far smaller
// (Claude Code's ~/.claude.json, the largest, holds its history too).
const maxFile = 64 << 20

// maxBackups is how many backups of one file are kept: each holds the
// secrets the file held.
const maxBackups = 5

// maxRetries bounds how often a write starts again because the client
// changed its file meanwhile (each try costs an fsync: a few ms).
const maxRetries = 200

// Plan is one connect or disconnect worked out and not yet written.
type Plan struct {
	Client string `json:"client"`
	Title  string `json:"title"`
	// Path is the client's file (a link is followed to its target, which
	// must stay within the project or the home: within).
	Path string `json:"path"`
	// Exists is whether the file is there already.
	Exists bool `json:"exists"`
	// Changed is false when the file already says what it should.
	Changed bool   `json:"changed"`
	Before  []byte `json:"-"`
	After   []byte `json:"-"`
	mode    fs.FileMode
	// edit makes After of Before; a write that finds the file changed by
	// the client meanwhile makes it again of the client's text.
	edit func(src []byte) ([]byte, error)
}

// Then adds a step to the plan's edit — taking out moved entries, or
// putting them back — and works the plan out again over the same text.
func (p *Plan) Then(step func(src, edited []byte) ([]byte, error)) error {
	edit := p.edit
	p.edit = func(src []byte) ([]byte, error) {
		out, err := edit(src)
		if err != nil {
			return nil, err
		}
		return step(src, out)
	}
	return p.plan(current{data: p.Before, exists: p.Exists, mode: p.mode})
}

// Prepare reads the client's file and works out the edit.
func Prepare(name string, o Options, connect bool) (*Plan, error) {
	return prepare(name, o, func(src []byte) ([]byte, error) {
		if len(src) == 0 && !connect {
			return src, nil
		}
		return EditLaunch(name, src, o.Command, o.Launch, connect)
	})
}

func prepare(name string, o Options, edit func([]byte) ([]byte, error)) (*Plan, error) {
	path, err := Path(name, o)
	if err != nil {
		return nil, err
	}
	real, err := within(path, o)
	if err != nil {
		return nil, err
	}
	p := &Plan{Client: name, Title: Title(name), Path: real, mode: 0o600, edit: edit}
	cur, err := readPlain(p.Path)
	if err != nil {
		return nil, err
	}
	if err := p.plan(cur); err != nil {
		return nil, err
	}
	return p, nil
}

// current is a client's file as read: its text, whether it exists, and
// its mode.
type current struct {
	data   []byte
	exists bool
	mode   fs.FileMode
	info   fs.FileInfo // of the file read, to tell it from another
}

// readPlain reads path, which must be a regular file of a sensible size
// (or missing).
func readPlain(path string) (current, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return current{mode: 0o600}, nil
	case err != nil:
		return current{}, err
	case !info.Mode().IsRegular():
		return current{}, fmt.Errorf("%s is not a regular file", path)
	case info.Size() > maxFile:
		return current{}, fmt.Errorf("%s is larger than %d MiB: not a settings file", path, maxFile>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return current{}, err
	}
	defer f.Close()
	// The file opened, which a rename may have replaced since the Stat.
	if info, err = f.Stat(); err != nil {
		return current{}, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return current{}, err
	}
	if len(b) > maxFile {
		return current{}, fmt.Errorf("%s is larger than %d MiB: not a settings file", path, maxFile>>20)
	}
	return current{data: b, exists: true, mode: info.Mode().Perm(), info: info}, nil
}

// plan works the edit out over cur.
func (p *Plan) plan(cur current) error {
	p.Before, p.Exists, p.mode = cur.data, cur.exists, cur.mode
	after, err := p.edit(cur.data)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	p.After = after
	p.Changed = !bytes.Equal(p.After, p.Before)
	return nil
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
	return udiff.Unified(from, p.Path, string(p.Before), string(p.After))
}

// Write saves the edit without losing what the client writes meanwhile:
// the new text takes the file's place in one step that hands back what was
// there (replace), and if that is not the text the edit was made of — the
// client, running, wrote in between — the edit is made again of the
// client's text and put in its place, up to maxRetries times. The file as
// it was goes first to a private backup beside it (named with the time; a
// second edit in the same second gets a name of its own), of which the
// newest maxBackups are kept. It returns the backup's path ("" for a new
// file).
func (p *Plan) Write(now time.Time) (backup string, err error) {
	if !p.Changed {
		return "", nil
	}
	for range maxRetries {
		if backup == "" && p.Exists {
			if backup, err = p.keepBackup(now); err != nil {
				return "", err
			}
		}
		if !p.Exists {
			if err := os.MkdirAll(filepath.Dir(p.Path), 0o700); err != nil {
				return backup, err
			}
		}
		was, err := replace(p.Path, p.After, p.mode, p.Exists, p.Before)
		if err != nil {
			return backup, err
		}
		if was == nil {
			return backup, nil // what the edit was made of was replaced
		}
		// The client wrote meanwhile: make the edit again of its text.
		if err := p.plan(*was); err != nil {
			return backup, err
		}
		if !p.Changed {
			return backup, nil
		}
	}
	return backup, fmt.Errorf("%s keeps changing (is %s writing it right now?): nothing of its was lost; try again", p.Path, p.Title)
}

// keepBackup writes p.Before to a new backup, private, and removes the
// oldest beyond maxBackups.
func (p *Plan) keepBackup(now time.Time) (string, error) {
	prefix := p.Path + ".plexus-backup-"
	backup := freeBackupName(prefix + now.UTC().Format("20060102T150405Z"))
	if err := atomicfile.WriteFile(backup, p.Before, 0o600); err != nil {
		return "", fmt.Errorf("keeping a backup: %w", err)
	}
	old, err := backupsOf(p.Path)
	if err != nil {
		return backup, nil // the backup is kept; the old ones stay too
	}
	for len(old) > maxBackups {
		if old[0] != backup {
			os.Remove(old[0])
		}
		old = old[1:]
	}
	return backup, nil
}

// backupsOf lists the backups of path, oldest first.
func backupsOf(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := base + ".plexus-backup-"
	var out []string
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok && e.Type().IsRegular() && !strings.Contains(rest, ".tmp-") {
			out = append(out, rest)
		}
	}
	slices.SortFunc(out, compareBackups)
	for i, rest := range out {
		out[i] = filepath.Join(dir, prefix+rest)
	}
	return out, nil
}

// compareBackups orders backup suffixes by time, then by the -N a second
// backup of the same second gets.
func compareBackups(a, b string) int {
	at, an := splitBackup(a)
	bt, bn := splitBackup(b)
	if c := strings.Compare(at, bt); c != 0 {
		return c
	}
	return an - bn
}

func splitBackup(s string) (string, int) {
	t, n, ok := strings.Cut(s, "-")
	if !ok {
		return t, 1
	}
	i, _ := strconv.Atoi(n)
	return t, i
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
