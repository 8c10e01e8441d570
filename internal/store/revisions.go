package store

import (
	"bytes"
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

// RevisionsDir is the directory under the home that keeps the last
// versions of extensions.json that a save replaced, so that any overwrite
// can be undone.
const RevisionsDir = "revisions"

// MaxRevisions bounds the versions kept; the oldest go first.
const MaxRevisions = 20

// HandEditError refuses a save because extensions.json changed on disk
// since the daemon last read or wrote it: someone edited it by hand and has
// not applied the edit yet. Saving over it would lose the edit.
type HandEditError struct {
	Path string
}

func (e *HandEditError) Error() string {
	return fmt.Sprintf("%s was changed by hand since the daemon last read it; nothing was saved, and the file is as you left it", e.Path)
}

// Revision is one kept version of extensions.json.
type Revision struct {
	Name  string    // the file's name under RevisionsDir
	Saved time.Time // when it was replaced
	Size  int64
}

// known is what the daemon last read from or wrote to extensions.json: a
// save goes ahead only while the file still holds exactly that.
type known struct {
	exists bool
	data   []byte
}

// readKnown reads the file as a known version.
func readKnown(path string) (known, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return known{}, nil
	}
	if err != nil {
		return known{}, err
	}
	return known{exists: true, data: data}, nil
}

func (k known) same(o known) bool { return k.exists == o.exists && bytes.Equal(k.data, o.data) }

// checkUnchanged refuses if extensions.json is no longer what the daemon
// last read or wrote (s.mu held). It returns what is on disk.
func (s *Store) checkUnchanged() (known, error) {
	disk, err := readKnown(s.path(ConfigFile))
	if err != nil {
		return known{}, fmt.Errorf("reading %s: %w", s.path(ConfigFile), err)
	}
	if !disk.same(s.onDisk) {
		return known{}, &HandEditError{Path: s.path(ConfigFile)}
	}
	return disk, nil
}

// CheckUnchanged reports a *HandEditError if extensions.json changed on
// disk since the daemon last read or wrote it; a caller about to prepare a
// save (start a server to verify it, say) asks first.
func (s *Store) CheckUnchanged() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.checkUnchanged()
	return err
}

// ReadConfigFile reads extensions.json for a reload. The bytes are passed
// back to CommitReload, which saves only if the file still holds them.
func (s *Store) ReadConfigFile() (data []byte, exists bool, err error) {
	k, err := readKnown(s.path(ConfigFile))
	return k.data, k.exists, err
}

// AcceptConfigFile records read (what ReadConfigFile returned, and what
// the configuration in memory already says) as the file's known content,
// if the file still holds it: a reload that found nothing to change.
func (s *Store) AcceptConfigFile(read []byte, exists bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := readKnown(s.path(ConfigFile))
	if err != nil {
		return err
	}
	if !disk.same(known{exists: exists, data: read}) {
		return &HandEditError{Path: s.path(ConfigFile)}
	}
	s.onDisk = disk
	return nil
}

// removeRevisionStrays removes the temporary files of a revision whose
// keeping was interrupted (atomicfile.TempPattern of any name).
func removeRevisionStrays(dir string) error {
	strays, err := filepath.Glob(filepath.Join(dir, atomicfile.TempPattern("*")))
	if err != nil {
		return err
	}
	for _, p := range strays {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// keepRevision copies the version of extensions.json about to be replaced
// into RevisionsDir and drops the oldest beyond MaxRevisions (s.mu held).
func (s *Store) keepRevision(old known) error {
	if !old.exists {
		return nil
	}
	dir := s.path(RevisionsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving settings: keeping the version it replaces: %w", err)
	}
	now := time.Now().UTC()
	name := ConfigFile + "." + now.Format("20060102T150405.000000000Z")
	if err := atomicfile.WriteFile(filepath.Join(dir, name), old.data, 0o600); err != nil {
		os.Remove(dir) // only if empty: the first revision could not be kept
		return fmt.Errorf("saving settings: keeping the version it replaces: %w", err)
	}
	revs, err := s.revisions()
	if err != nil {
		return err
	}
	for len(revs) > MaxRevisions {
		os.Remove(filepath.Join(dir, revs[len(revs)-1].Name))
		revs = revs[:len(revs)-1]
	}
	return nil
}

// Revisions lists the kept versions of extensions.json, newest first.
func (s *Store) Revisions() ([]Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revisions()
}

func (s *Store) revisions() ([]Revision, error) {
	entries, err := os.ReadDir(s.path(RevisionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Revision
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), ConfigFile+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		t, err := time.Parse("20060102T150405.000000000Z", stamp)
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

// RevisionData returns a kept version's content; name must be one that
// Revisions lists.
func (s *Store) RevisionData(name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	revs, err := s.revisions()
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(revs, func(r Revision) bool { return r.Name == name }) {
		return nil, fmt.Errorf("no kept revision named %q: `plexus revisions` lists them: %w", name, fs.ErrNotExist)
	}
	return os.ReadFile(filepath.Join(s.path(RevisionsDir), name))
}

// ReplaceConfigFile writes data as extensions.json, keeping the version it
// replaces as a revision, without applying it: the caller reloads next.
// The new content is not known to the store until a reload reads it, so
// until then saves are refused as for a hand edit.
func (s *Store) ReplaceConfigFile(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := readKnown(s.path(ConfigFile))
	if err != nil {
		return err
	}
	if err := s.keepRevision(disk); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path(ConfigFile), data, 0o600); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	return nil
}

// DiscardHandEdits puts back extensions.json as the daemon last read or
// wrote it, keeping the edited version as a revision first: discarding
// loses nothing either.
func (s *Store) DiscardHandEdits() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := readKnown(s.path(ConfigFile))
	if err != nil {
		return err
	}
	if disk.same(s.onDisk) {
		return nil
	}
	if err := s.keepRevision(disk); err != nil {
		return err
	}
	if !s.onDisk.exists {
		if err := os.Remove(s.path(ConfigFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := atomicfile.WriteFile(s.path(ConfigFile), s.onDisk.data, 0o600); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	return nil
}
