package docstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// RevisionsDir is the directory under the home that keeps the versions of
// the documents that saves replaced, so that any overwrite can be undone.
const RevisionsDir = "revisions"

// Files keeps each document as a file of its name under a home directory,
// mode 0600, written atomically (atomicfile). The daemon that holds the
// home's lock is its only writer, so Write checks nothing: the callers
// compare what is on disk with what they last read themselves.
type Files struct {
	Home string
}

var _ Backend = Files{}

// OpenFiles returns the Files of home, first removing the temporary files
// that an interrupted save of one of names, or of a revision, left behind
// (RemoveStrays): the files themselves are whole (old or new). The caller
// holds the home's lock.
func OpenFiles(home string, names ...string) (Files, error) {
	if _, err := RemoveStrays(home, names...); err != nil {
		return Files{}, fmt.Errorf("removing temporary files of an interrupted save: %w", err)
	}
	return Files{Home: home}, nil
}

func (f Files) path(name string) string { return filepath.Join(f.Home, name) }

// Read reads the file.
func (f Files) Read(name string) (Doc, error) {
	data, err := os.ReadFile(f.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Doc{}, nil
	}
	if err != nil {
		return Doc{}, err
	}
	return Doc{Exists: true, Data: data}, nil
}

// Write keeps the file's current content as a revision if asked, then
// replaces the file.
func (f Files) Write(name string, prev Doc, data []byte, keep bool) (Doc, error) {
	if keep && prev.Exists {
		if prev.summed {
			return Doc{}, fmt.Errorf("%s: keeping the version it replaces needs its content, not its digest", name)
		}
		if err := f.keep(name, prev.Data); err != nil {
			return Doc{}, err
		}
	}
	if err := atomicfile.WriteFile(f.path(name), data, 0o600); err != nil {
		return Doc{}, err
	}
	return Doc{Exists: true, Data: data}, nil
}

// Remove removes the file; a missing one is removed already.
func (f Files) Remove(name string, _ Doc) error {
	if err := os.Remove(f.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// keep copies data into RevisionsDir as a version of name replaced now
// and drops the oldest beyond MaxRevisions.
func (f Files) keep(name string, data []byte) error {
	if err := f.AddRevision(name, time.Now(), data); err != nil {
		return fmt.Errorf("keeping the version it replaces: %w", err)
	}
	revs, err := f.Revisions(name)
	if err != nil {
		return err
	}
	dir := f.path(RevisionsDir)
	for len(revs) > MaxRevisions {
		os.Remove(filepath.Join(dir, revs[len(revs)-1].Name))
		revs = revs[:len(revs)-1]
	}
	return nil
}

// AddRevision writes data as RevisionsDir/name.STAMP.
func (f Files) AddRevision(name string, saved time.Time, data []byte) error {
	dir := f.path(RevisionsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, RevisionName(name, saved)), data, 0o600); err != nil {
		os.Remove(dir) // only if empty: the first revision could not be kept
		return err
	}
	return nil
}

// Revisions lists RevisionsDir's versions of name, newest first.
func (f Files) Revisions(name string) ([]Revision, error) {
	entries, err := os.ReadDir(f.path(RevisionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Revision
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), name+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		t, err := time.Parse(stampLayout, stamp)
		if err != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Revision{Name: e.Name(), Saved: t, Size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b Revision) int { return b.Saved.Compare(a.Saved) })
	return out, nil
}

// RevisionData reads a version that Revisions lists.
func (f Files) RevisionData(name, revision string) ([]byte, error) {
	revs, err := f.Revisions(name)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(revs, func(r Revision) bool { return r.Name == revision }) {
		return nil, fmt.Errorf("no kept revision named %q: %w", revision, fs.ErrNotExist)
	}
	return os.ReadFile(filepath.Join(f.path(RevisionsDir), revision))
}

// RemoveStrays removes the temporary files that saves of names (and of
// their kept versions, under RevisionsDir), killed before their rename,
// left in home, and returns the paths it removed, relative to home. Only
// files named as atomicfile names its temporary files go; the documents
// themselves are whole (old or new). Call it only while holding the
// home's lock: a save in progress has a temporary file of the same name.
func RemoveStrays(home string, names ...string) ([]string, error) {
	removed, err := atomicfile.RemoveStrays(home, names...)
	if err != nil {
		return removed, err
	}
	dir := filepath.Join(home, RevisionsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return removed, nil
	}
	if err != nil {
		return removed, err
	}
	var revs []string
	for _, e := range entries {
		if rev, ok := revisionOfTemp(e.Name(), names); ok {
			revs = append(revs, rev)
		}
	}
	gone, err := atomicfile.RemoveStrays(dir, revs...)
	for _, g := range gone {
		removed = append(removed, filepath.Join(RevisionsDir, g))
	}
	return removed, err
}

// revisionOfTemp returns the revision a temporary file in RevisionsDir
// was being written as, if it is one of a revision of names.
func revisionOfTemp(file string, names []string) (string, bool) {
	i := strings.LastIndex(file, ".tmp-")
	if i < 1 || file[0] != '.' {
		return "", false
	}
	rev := file[1:i]
	for _, n := range names {
		stamp, ok := strings.CutPrefix(rev, n+".")
		if _, err := time.Parse(stampLayout, stamp); ok && err == nil {
			return rev, atomicfile.IsTemp(file, rev)
		}
	}
	return "", false
}

// Shared is false: one daemon owns a home.
func (Files) Shared() bool { return false }

// Where is the file's path.
func (f Files) Where(name string) string { return f.path(name) }

// Follow returns at once: nobody else writes the home.
func (Files) Follow(context.Context, func(string)) error { return nil }

// Close does nothing.
func (Files) Close() {}
