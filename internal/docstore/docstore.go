// Package docstore is where the daemon keeps its documents — the settings
// (extensions.json), the managed secrets (creds.json), the OAuth tokens
// (oauth.json), the pins (pins.json) and the versions of the settings that
// saves replaced. Two backends sit behind one interface: Files, under
// $PLEXUS_HOME (the one-machine default), and a PostgreSQL database shared
// by the replicas of a team (package pgstore). The packages that own a
// document's meaning (store, oauth, pins) read and write it only here, so
// nothing else in the daemon knows which backend it runs on.
package docstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// Doc is one document as a backend holds it.
type Doc struct {
	Exists bool
	Data   []byte
	// Gen counts the backend's writes of the document, where the backend
	// keeps such a count (a shared one); a conditional write names the Gen
	// it read. Files keep none: it is 0.
	Gen int64

	// sum stands for Data in a Doc made by Digest.
	sum    [sha256.Size]byte
	summed bool
}

// Same reports whether d and o hold the same content at the same
// generation.
func (d Doc) Same(o Doc) bool {
	if d.Exists != o.Exists || d.Gen != o.Gen {
		return false
	}
	if !d.summed && !o.summed {
		return string(d.Data) == string(o.Data)
	}
	return d.digest() == o.digest()
}

// Digest returns d without its content, which it stands for by its
// SHA-256: what a holder keeps of a large document that it only compares
// with Same and writes without keeping a revision of (pins.json holds
// every tool's schemas). Such a Doc cannot be the prev of a Write that
// keeps the version it replaces.
func (d Doc) Digest() Doc {
	return Doc{Exists: d.Exists, Gen: d.Gen, sum: d.digest(), summed: true}
}

func (d Doc) digest() [sha256.Size]byte {
	if d.summed {
		return d.sum
	}
	return sha256.Sum256(d.Data)
}

// Revision is one kept version of a document that a save replaced.
type Revision struct {
	Name  string    // names the version among the document's revisions
	Saved time.Time // when it was replaced
	Size  int64
}

// StaleError refuses a conditional write: the document is no longer the
// version the writer read, because another daemon sharing the backend
// wrote it meanwhile.
type StaleError struct {
	Name    string
	Current Doc
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s was changed through another replica meanwhile", e.Name)
}

// ErrUnreachable says the backend could not be reached: a shared
// database that is stopped, stalled or cut off.
var ErrUnreachable = errors.New("the store is unreachable")

// UnreachableError is a write the backend could not make because it could
// not be reached. Unless Unknown, nothing was changed; Unknown says the
// connection was lost while the write was being committed, so that it
// may or may not have been made.
type UnreachableError struct {
	Name    string
	Unknown bool
	Err     error
}

func (e *UnreachableError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("the store stopped answering while %s was being saved: the change may or may not have been made (%v)", e.Name, e.Err)
	}
	return fmt.Sprintf("the store is unreachable, nothing was changed (%s: %v)", e.Name, e.Err)
}

func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// Backend keeps the documents. Every write is atomic and durable when it
// returns; on an error nothing changed.
type Backend interface {
	// Read returns the document name (Exists false when there is none).
	Read(name string) (Doc, error)
	// Write replaces the document name with data, if it is still prev (a
	// shared backend checks prev.Gen in the same transaction and returns a
	// *StaleError otherwise). keep asks that the version it replaces be
	// kept among the document's revisions (MaxRevisions of them).
	Write(name string, prev Doc, data []byte, keep bool) (Doc, error)
	// Remove deletes the document, on the same condition as Write.
	Remove(name string, prev Doc) error
	// Revisions lists the kept versions of the document, newest first.
	Revisions(name string) ([]Revision, error)
	// RevisionData returns a kept version's content.
	RevisionData(name, revision string) ([]byte, error)
	// AddRevision keeps data as a version of name replaced at saved (a
	// migration from another backend).
	AddRevision(name string, saved time.Time, data []byte) error
	// Shared reports whether other daemons write the same documents: a
	// document that differs from what this daemon last read was then
	// written by one of them, not edited by hand.
	Shared() bool
	// Where names the place a document is kept, for messages.
	Where(name string) string
	// Follow calls changed with a document's name whenever another daemon
	// wrote it, and with "" when changes may have been missed (the
	// connection that announces them was lost and is back): then every
	// document must be read again. It returns when ctx is done. A backend
	// that is not shared returns at once.
	Follow(ctx context.Context, changed func(name string)) error
	// Close releases the backend's connections.
	Close()
}

// MaxRevisions bounds the versions kept of a document; the oldest go first.
const MaxRevisions = 20

// RevisionName is the name of a version of doc replaced at saved.
func RevisionName(doc string, saved time.Time) string {
	return doc + "." + saved.UTC().Format(stampLayout)
}

const stampLayout = "20060102T150405.000000000Z"
