// Package store persists the daemon's settings: extensions.json (the
// configuration) and creds.json (the managed environment) under
// $PLEXUS_HOME. The daemon is the only writer (R-OWN-1, R-OWN-2).
//
// Every save is atomic and carries a revision; a save based on a stale
// revision is refused with a *ConflictError (R-OWN-3). Memory and disk never
// diverge: the in-memory copy changes only after the file is durably written,
// so a failed save (a full disk, say) leaves both at the old state and the
// caller gets the error.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/creds"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// File names under the home directory.
const (
	ConfigFile = "extensions.json"
	CredsFile  = "creds.json"
)

// ConflictError is returned when a save is based on a stale revision.
type ConflictError struct {
	File    string // ConfigFile or CredsFile
	Based   int64
	Current int64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s changed meanwhile: the edit is based on revision %d, the current one is %d", e.File, e.Based, e.Current)
}

// Store holds the current settings in memory and on disk.
type Store struct {
	home string
	docs docstore.Backend

	mu    sync.Mutex // guards cfg, creds, onDisk and credsDoc
	cfg   *config.File
	creds *creds.File
	// onDisk is extensions.json as the store last read or wrote it; a save
	// over anything else is refused (revisions.go).
	onDisk docstore.Doc
	// credsDoc is creds.json as the store last read or wrote it.
	credsDoc docstore.Doc
	// changed, if set, is told of every new configuration (OnConfig).
	changed func(*config.File)
}

// OnConfig has the store call f with each new configuration it holds,
// saved here or adopted from another daemon, before the change is
// acknowledged to whoever made it. f runs under the store's lock: it must
// be quick, must not call the store, and must not change what it is
// given. Set it before the store is shared.
func (s *Store) OnConfig(f func(*config.File)) { s.changed = f }

// noteChange tells OnConfig's function of the new configuration (s.mu
// held).
func (s *Store) noteChange() {
	if s.changed != nil {
		s.changed(s.cfg)
	}
}

// EnsureHome creates the home directory 0700, or tightens an existing one
// that is more open, and refuses one owned by another user.
func EnsureHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", home, err)
	}
	fi, err := os.Stat(home)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", home)
	}
	if err := checkOwner(home, fi); err != nil {
		return err
	}
	if err := makePrivate(home, fi); err != nil {
		return fmt.Errorf("making %s private: %w", home, err)
	}
	return nil
}

// Open loads the settings from home, creating the directory and an empty
// creds.json (0600) if they are missing. A settings file that does not
// decode is an error naming every problem: the daemon does not start on a
// configuration it would misread.
func Open(home string) (*Store, error) {
	if err := EnsureHome(home); err != nil {
		return nil, err
	}
	docs, err := docstore.OpenFiles(home, ConfigFile, CredsFile)
	if err != nil {
		return nil, err
	}
	return OpenOn(home, docs)
}

// OpenOn loads the settings from docs, as Open does from files; home is
// the daemon's home all the same (its socket, its log, the working
// directory of stdio servers).
func OpenOn(home string, docs docstore.Backend) (*Store, error) {
	s := &Store{home: home, docs: docs}
	k, err := docs.Read(ConfigFile)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", docs.Where(ConfigFile), err)
	case !k.Exists:
		s.cfg = &config.File{}
	default:
		cfg, err := config.Decode(k.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", docs.Where(ConfigFile), err)
		}
		s.cfg = cfg
	}
	s.onDisk = k
	if err := s.loadCreds(); err != nil {
		return nil, err
	}
	return s, nil
}

// loadCreds reads creds.json, writing an empty one if there is none.
func (s *Store) loadCreds() error {
	d, err := s.docs.Read(CredsFile)
	switch {
	case err != nil:
		return fmt.Errorf("reading %s: %w", s.docs.Where(CredsFile), err)
	case !d.Exists:
		s.credsDoc = d
		s.creds, err = s.writeCreds(&creds.File{Env: map[string]string{}})
		var stale *docstore.StaleError
		if errors.As(err, &stale) {
			d = stale.Current // another replica wrote it first
			break
		}
		if err != nil {
			return fmt.Errorf("saving secrets: %w", err)
		}
		return nil
	}
	c, err := creds.Decode(d.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.docs.Where(CredsFile), err)
	}
	if !s.docs.Shared() {
		if err := os.Chmod(s.docs.Where(CredsFile), 0o600); err != nil {
			return fmt.Errorf("making %s private: %w", s.docs.Where(CredsFile), err)
		}
	}
	s.creds, s.credsDoc = c, d
	return nil
}

// Docs returns the backend the settings are kept in, where the OAuth
// tokens and the pins are kept too.
func (s *Store) Docs() docstore.Backend { return s.docs }

// RefreshCreds reads the managed environment again, after another daemon
// sharing the backend changed it.
func (s *Store) RefreshCreds() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.docs.Read(CredsFile)
	if err != nil || d.Same(s.credsDoc) {
		return err
	}
	if !d.Exists {
		return nil // never removed by a daemon: wait for it to be written
	}
	c, err := creds.Decode(d.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.docs.Where(CredsFile), err)
	}
	s.creds, s.credsDoc = c, d
	return nil
}

// Home returns the home directory.
func (s *Store) Home() string { return s.home }

// Config returns a copy of the current configuration.
func (s *Store) Config() *config.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Clone()
}

// Shared returns the current configuration itself, for readers on a hot
// path: the store replaces it whole on every save and never changes it, and
// the caller must not change it either.
func (s *Store) Shared() *config.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Creds returns a copy of the current managed environment.
func (s *Store) Creds() *creds.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creds.Clone()
}

// LookupSecret resolves a managed variable.
func (s *Store) LookupSecret(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.creds.Env[name]
	return v, ok
}

// CommitConfig validates next and saves it as the new configuration, if the
// current revision is still based (based == 0 skips the check) and the file
// still holds what the daemon last read or wrote (else a *HandEditError).
// It returns the new revision. On any error nothing changed, in memory or
// on disk. The version the save replaces is kept under RevisionsDir.
//
// A fresh home is at revision 0, so an edit based on it cannot be told from
// one that asks for no check: such edits are not protected from each other.
func (s *Store) CommitConfig(based int64, next *config.File) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := s.checkUnchanged(based)
	if err != nil {
		return 0, err
	}
	return s.commitConfig(based, next, disk)
}

// CommitReload saves next, decoded from read (what ReadConfigFile
// returned), as CommitConfig does, if the file still holds read: a reload
// applies the hand edit it read, and no later one. On a shared backend
// read is a version another daemon saved already: it is taken as it is,
// with its own revision, and nothing is written.
func (s *Store) CommitReload(based int64, next *config.File, read []byte, exists bool) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, err := s.docs.Read(ConfigFile)
	if err != nil {
		return 0, err
	}
	if !sameContent(disk, read, exists) {
		return 0, s.divergedLocked(disk)
	}
	if s.docs.Shared() {
		return s.adoptLocked(disk)
	}
	return s.commitConfig(based, next, disk)
}

// adoptLocked takes disk, saved by another daemon, as the configuration
// (s.mu held).
func (s *Store) adoptLocked(disk docstore.Doc) (int64, error) {
	cfg := &config.File{}
	if disk.Exists {
		var err error
		if cfg, err = config.Decode(disk.Data); err != nil {
			return 0, fmt.Errorf("%s: %w", s.docs.Where(ConfigFile), err)
		}
	}
	s.cfg, s.onDisk = cfg, disk
	s.noteChange()
	return cfg.Revision, nil
}

// commitConfig saves next over disk, the file's current content (s.mu held).
func (s *Store) commitConfig(based int64, next *config.File, disk docstore.Doc) (int64, error) {
	if based != 0 && based != s.cfg.Revision {
		return 0, &ConflictError{File: ConfigFile, Based: based, Current: s.cfg.Revision}
	}
	next = next.Clone()
	next.Revision = s.cfg.Revision + 1
	if err := config.Validate(next); err != nil {
		return 0, err
	}
	data, err := config.Encode(next)
	if err != nil {
		return 0, err
	}
	// Keep in memory exactly what the next Open will read (Decode turns
	// empty lists into none), and never write a file that would not load.
	saved, err := config.Decode(data)
	if err != nil {
		return 0, err
	}
	doc, err := s.docs.Write(ConfigFile, disk, data, true)
	if err != nil {
		return 0, s.saveError(ConfigFile, "saving settings", based, err)
	}
	s.cfg = saved
	s.onDisk = doc
	s.noteChange()
	return saved.Revision, nil
}

// saveError is a failed write's error: a *ConflictError when another
// daemon sharing the backend wrote the document first.
func (s *Store) saveError(name, what string, based int64, err error) error {
	var stale *docstore.StaleError
	if !errors.As(err, &stale) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return &ConflictError{File: name, Based: based, Current: revisionOf(stale.Current)}
}

// revisionOf reads the revision of a settings or secrets document, 0 when
// it has none or does not decode.
func revisionOf(d docstore.Doc) int64 {
	var v struct {
		Revision int64 `json:"revision"`
	}
	if json.Unmarshal(d.Data, &v) != nil {
		return 0
	}
	return v.Revision
}

// CommitCreds saves next as the managed environment, like CommitConfig.
func (s *Store) CommitCreds(based int64, next *creds.File) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if based != 0 && based != s.creds.Revision {
		return 0, &ConflictError{File: CredsFile, Based: based, Current: s.creds.Revision}
	}
	next = next.Clone()
	next.Revision = s.creds.Revision + 1
	// A name creds.json may not hold would stop the next Open, hence the
	// daemon: refuse it like an invalid configuration.
	if err := validateCreds(next); err != nil {
		return 0, err
	}
	saved, err := s.writeCreds(next)
	if err != nil {
		return 0, s.saveError(CredsFile, "saving secrets", based, err)
	}
	s.creds = saved
	return saved.Revision, nil
}

// validateCreds reports every variable name that creds.json may not hold.
func validateCreds(c *creds.File) error {
	var ps []config.Problem
	for _, name := range c.Names() {
		if !creds.ValidName(name) {
			ps = append(ps, config.Problem{
				Path:    fmt.Sprintf("env[%q]", name),
				Message: "is not a valid variable name: use letters, digits and _, not starting with a digit",
			})
		}
	}
	if len(ps) > 0 {
		return &config.Error{Problems: ps}
	}
	return nil
}

// writeCreds saves c and returns what the next Open will read back (JSON
// cannot hold invalid UTF-8, say), so that memory and disk agree (s.mu
// held, or the store not yet shared).
func (s *Store) writeCreds(c *creds.File) (*creds.File, error) {
	data, err := creds.Encode(c)
	if err != nil {
		return nil, err
	}
	saved, err := creds.Decode(data)
	if err != nil {
		return nil, err
	}
	doc, err := s.docs.Write(CredsFile, s.credsDoc, data, false)
	if err != nil {
		return nil, err
	}
	s.credsDoc = doc
	return saved, nil
}
