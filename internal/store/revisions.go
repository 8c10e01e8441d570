package store

import (
	"bytes"
	"fmt"
	"time"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// RevisionsDir is the directory under the home that keeps the last
// versions of extensions.json that a save replaced, so that any overwrite
// can be undone.
const RevisionsDir = docstore.RevisionsDir

// MaxRevisions bounds the versions kept; the oldest go first.
const MaxRevisions = docstore.MaxRevisions

// Revision is one kept version of extensions.json.
type Revision = docstore.Revision

// HandEditError refuses a save because extensions.json changed on disk
// since the daemon last read or wrote it: someone edited it by hand and has
// not applied the edit yet. Saving over it would lose the edit.
type HandEditError struct {
	Path string
}

func (e *HandEditError) Error() string {
	return fmt.Sprintf("%s was changed by hand since the daemon last read it; nothing was saved, and the file is as you left it", e.Path)
}

// sameContent reports whether d holds read (exists telling whether there
// was a document at all).
func sameContent(d docstore.Doc, read []byte, exists bool) bool {
	return d.Exists == exists && bytes.Equal(d.Data, read)
}

// divergedLocked is the error of a save over disk, which is not what the
// store last read or wrote: a hand edit not yet applied, or on a shared
// backend another daemon's save that this one has not applied yet (a
// conflict, like a stale revision).
func (s *Store) divergedLocked(disk docstore.Doc) error {
	if s.docs.Shared() {
		return &ConflictError{File: ConfigFile, Based: s.cfg.Revision, Current: revisionOf(disk)}
	}
	return &HandEditError{Path: s.docs.Where(ConfigFile)}
}

// checkUnchanged refuses if extensions.json is no longer what the daemon
// last read or wrote (s.mu held). It returns what is there.
func (s *Store) checkUnchanged(based int64) (docstore.Doc, error) {
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("reading %s: %w", s.docs.Where(ConfigFile), err)
	}
	if !disk.Same(s.onDisk) {
		err := s.divergedLocked(disk)
		if ce, ok := err.(*ConflictError); ok && based != 0 {
			ce.Based = based
		}
		return docstore.Doc{}, err
	}
	return disk, nil
}

// CheckUnchanged reports a *HandEditError if extensions.json changed on
// disk since the daemon last read or wrote it (on a shared backend, a
// *ConflictError if another daemon saved it); a caller about to prepare a
// save (start a server to verify it, say) asks first.
func (s *Store) CheckUnchanged() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.checkUnchanged(0)
	return err
}

// ReadConfigFile reads extensions.json for a reload. The bytes are passed
// back to CommitReload, which saves only if the file still holds them.
func (s *Store) ReadConfigFile() (data []byte, exists bool, err error) {
	d, err := s.docs.Read(ConfigFile)
	return d.Data, d.Exists, err
}

// AcceptConfigFile records read (what ReadConfigFile returned, and what
// the configuration in memory already says) as the file's known content,
// if the file still holds it: a reload that found nothing to change. On a
// shared backend its revision is taken too.
func (s *Store) AcceptConfigFile(read []byte, exists bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return err
	}
	if !sameContent(disk, read, exists) {
		return s.divergedLocked(disk)
	}
	if s.docs.Shared() {
		_, err := s.adoptLocked(disk)
		return err
	}
	s.onDisk = disk
	return nil
}

// Revisions lists the kept versions of extensions.json, newest first.
func (s *Store) Revisions() ([]Revision, error) {
	return s.docs.Revisions(ConfigFile)
}

// RevisionData returns a kept version's content; name must be one that
// Revisions lists.
func (s *Store) RevisionData(name string) ([]byte, error) {
	data, err := s.docs.RevisionData(ConfigFile, name)
	if err != nil {
		return nil, fmt.Errorf("%w (`plexus revisions` lists them)", err)
	}
	return data, nil
}

// ReplaceConfigFile writes data as extensions.json, keeping the version it
// replaces as a revision, without applying it: the caller reloads next.
// The new content is not known to the store until a reload reads it, so
// until then saves are refused as for a hand edit.
//
// On a shared backend the version is written as the next revision (every
// daemon applies what is saved there, so it must decode), and the reload
// applies it.
func (s *Store) ReplaceConfigFile(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return err
	}
	if s.docs.Shared() {
		if !disk.Same(s.onDisk) {
			return s.divergedLocked(disk)
		}
		cfg, err := config.Decode(data)
		if err != nil {
			return err
		}
		cfg.Revision = s.cfg.Revision + 1
		if data, err = config.Encode(cfg); err != nil {
			return err
		}
	}
	if _, err := s.docs.Write(ConfigFile, disk, data, true); err != nil {
		return s.saveError(ConfigFile, "saving settings", 0, err)
	}
	return nil
}

// DiscardHandEdits puts back extensions.json as the daemon last read or
// wrote it, keeping the edited version as a revision first: discarding
// loses nothing either. A shared backend has no hand edits: what differs
// there is another daemon's save, which is applied, not discarded.
func (s *Store) DiscardHandEdits() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs.Shared() {
		return nil
	}
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return err
	}
	if disk.Same(s.onDisk) {
		return nil
	}
	if !s.onDisk.Exists {
		if disk.Exists {
			if err := s.docs.AddRevision(ConfigFile, time.Now(), disk.Data); err != nil {
				return fmt.Errorf("saving settings: keeping the version it replaces: %w", err)
			}
		}
		return s.docs.Remove(ConfigFile, disk)
	}
	if _, err := s.docs.Write(ConfigFile, disk, s.onDisk.Data, true); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	return nil
}

// HandEdit returns what extensions.json holds if that is not what the
// daemon last read or wrote — a hand edit not applied yet — with edited
// true; a shared backend has none (what differs there is another
// daemon's save, which it applies).
func (s *Store) HandEdit() (data []byte, exists, edited bool, err error) {
	if s.docs.Shared() {
		return nil, false, false, nil
	}
	// Read under mu, as a save writes: else a save of the daemon's own
	// between the read and the comparison would look like a hand edit.
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return nil, false, false, err
	}
	if disk.Same(s.onDisk) {
		return nil, false, false, nil
	}
	return disk.Data, disk.Exists, true, nil
}
