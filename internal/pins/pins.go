// Package pins records what a person trusted, so that what they did not see
// cannot slip in unnoticed (R-CAT-6; docs/security.md T8, T30):
//
//   - Trust in a server is bound to a hash of its definition — command,
//     args, working directory, environment names, URL, headers (Trust) — not
//     to its name. A server whose definition is not the approved one is not
//     started until a person approves it, so swapping the command under a
//     trusted name ("MCPoison") needs approval again.
//   - Each tool's definition as it reaches models (title, description,
//     schemas, annotations, already cleaned by catalog.Clean, R-CAT-7, and
//     everything else Plexus passes on as the server wrote it: its _meta,
//     execution, icons — Definition.Extra) is pinned when first seen. A later change holds that tool back — it is
//     neither listed nor callable — until a person accepts it, so that a
//     silently altered tool ("rug pull") cannot reach a model.
//
// The pins live in $PLEXUS_HOME/pins.json (0600), written only by the
// daemon, atomically, with a revision; memory changes only after the file is
// durably written. Who counts as "a person" is the caller's business: the
// host approves a server added or edited through the settings API, and
// nothing else.
package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/docstore"
)

// Store holds the pins in memory and on disk.
type Store struct {
	docs docstore.Backend // nil for Unavailable
	now  func() time.Time
	// doc is pins.json as last read or written, by its digest: its bytes
	// would be a second copy of every pinned tool; guarded by writeMu.
	doc docstore.Doc

	// writeMu serialises the writes of the file; it is taken before mu.
	// Every write but a group commit's (commit.go) holds mu as well.
	writeMu sync.Mutex

	mu sync.Mutex
	f  *File // guarded by mu; replaced whole on every save, never mutated
	// versions count the changes of each server's pins and provisional
	// trust, so that a caller can tell a decision of Decide over the same
	// entries is still current; guarded by mu.
	versions map[string]int64
	// open is the batch of first-seen pins waiting for a write, writing
	// the one being written (commit.go); guarded by mu.
	open, writing *batch

	// broken is why the pins could not be loaded; then nothing is trusted
	// and nothing is saved.
	broken error

	// provisional trusts, in memory only, a definition being approved by a
	// transaction that has not committed yet: server → trust key.
	provisional map[string]string // guarded by mu

	// defs caches the definitions and hashes of entries by the digest of
	// their raw content: Check runs on every publish, and canonical JSON
	// is costly.
	defs map[defKey]hashed // guarded by mu

	// hashedNames is mcp.names = "hashed" (names.go), and namings counts
	// its changes, which make every decision stale (Version); guarded by
	// mu.
	hashedNames bool
	namings     int64
}

// hashed is a tool's definition with its hash.
type hashed struct {
	def  Definition
	hash string
	// legacy is the hash of def without Extra: what a pin made before
	// Extra was pinned holds for the same definition.
	legacy string
}

// maxCachedDefs bounds defs; past it the cache starts over.
const maxCachedDefs = 8192

// definitionLocked returns the definition of e and its hash.
func (s *Store) definitionLocked(e catalog.Entry) hashed {
	key := definitionKey(e)
	if d, ok := s.defs[key]; ok {
		return d
	}
	d := hashOf(e)
	s.keepLocked(key, d)
	return d
}

// defKey is the SHA-256 of an entry's raw content: a key that stands for
// the content without keeping a second copy of every tool's description
// and schemas. A collision would pass a changed tool as pinned, hence a
// cryptographic hash.
type defKey [sha256.Size]byte

// definitionKey is the key of e in the definitions cache: its fields, each
// after its length, so that no two entries share an encoding.
func definitionKey(e catalog.Entry) defKey {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, f := range [...]string{e.Tool, e.Title, e.Description} {
		h.Write(binary.AppendUvarint(n[:0], uint64(len(f))))
		io.WriteString(h, f)
	}
	for _, f := range [...][]byte{e.InputSchema, e.OutputSchema, e.Annotations, e.Raw} {
		h.Write(binary.AppendUvarint(n[:0], uint64(len(f))))
		h.Write(f)
	}
	return defKey(h.Sum(nil))
}

func hashOf(e catalog.Entry) hashed {
	def := DefinitionOf(e)
	h := hashed{def: def, hash: def.Hash(e.Tool)}
	h.legacy = h.hash
	if !bytes.Equal(def.Extra, noExtra) {
		old := def
		old.Extra = nil
		h.legacy = old.Hash(e.Tool)
	}
	return h
}

func (s *Store) keepLocked(key defKey, d hashed) {
	if s.defs == nil || len(s.defs) >= maxCachedDefs {
		s.defs = map[defKey]hashed{}
	}
	s.defs[key] = d
}

// Prepare computes the definitions and hashes of the tools among entries
// that Check and Decide will need, without holding the store's lock while
// it does: servers that connect together hash their tools in parallel,
// rather than one after the other in the host's publish.
func (s *Store) Prepare(entries []catalog.Entry) {
	var todo []catalog.Entry
	var keys []defKey
	s.mu.Lock()
	for _, e := range entries {
		if e.Kind != catalog.KindTool {
			continue
		}
		key := definitionKey(e)
		if _, ok := s.defs[key]; !ok {
			todo, keys = append(todo, e), append(keys, key)
		}
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	done := make([]hashed, len(todo))
	for i, e := range todo {
		done[i] = hashOf(e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, key := range keys {
		s.keepLocked(key, done[i])
	}
}

// OpenOn loads pins.json from docs (the home's files, or a team's
// database). If there is none yet — the first start of a Plexus that pins
// — every server configured now is trusted as it is and the file is
// written: these servers were added by the person who wrote the settings,
// and holding them all back would only teach people to approve without
// looking. From then on only a person's approval trusts a server.
func OpenOn(docs docstore.Backend, configured map[string]config.Server) (*Store, error) {
	s := &Store{docs: docs, now: time.Now}
	d, err := docs.Read(FileName)
	switch {
	case err != nil:
		return nil, err
	case !d.Exists:
		s.f = &File{Servers: map[string]Server{}}
		next := s.clone()
		for name, sc := range configured {
			next.Servers[name] = s.approved(Server{}, TrustOf(sc))
		}
		if err := s.saveLocked(next, ""); err != nil {
			return nil, err
		}
		return s, nil
	}
	f, err := Decode(d.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docs.Where(FileName), err)
	}
	if !docs.Shared() {
		if err := os.Chmod(docs.Where(FileName), 0o600); err != nil {
			return nil, fmt.Errorf("making %s private: %w", docs.Where(FileName), err)
		}
	}
	s.f, s.doc = f, d.Digest()
	return s, nil
}

// Refresh reads the pins again, after another daemon sharing the backend
// saved them. A version that does not decode is refused and the pins in
// memory are kept.
func (s *Store) Refresh() error {
	if s.docs == nil {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	d, err := s.docs.Read(FileName)
	if err != nil || !d.Exists || d.Same(s.doc) {
		return err
	}
	f, err := Decode(d.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.docs.Where(FileName), err)
	}
	s.mu.Lock()
	s.f, s.doc = f, d.Digest()
	for name := range f.Servers {
		s.touchLocked(name)
	}
	s.mu.Unlock()
	return nil
}

// Unavailable returns a Store for pins that could not be loaded: every
// server needs approval, saying why, and every approval fails with err.
func Unavailable(err error) *Store {
	return &Store{now: time.Now, f: &File{Servers: map[string]Server{}}, broken: err}
}

// Version changes whenever server's pins or provisional trust change: a
// decision of Decide over the same definition and entries is current while
// it does not.
func (s *Store) Version(server string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions[server] + s.namings
}

// touchLocked records a change of server's pins or trust.
func (s *Store) touchLocked(server string) {
	if s.versions == nil {
		s.versions = map[string]int64{}
	}
	s.versions[server]++
}

// Path returns where the pins are kept (the file's path).
func (s *Store) Path() string {
	if s.docs == nil {
		return ""
	}
	return s.docs.Where(FileName)
}

// File returns the current pins. The caller must not change it.
func (s *Store) File() *File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f
}

// Decision is what pinning makes of one server's catalog entries.
type Decision struct {
	// Offered are the entries that may reach models, in the given order.
	Offered []catalog.Entry
	// Held are the tools held back, in the given order.
	Held []Held
	// Pending is set when the server's definition is not approved: then
	// nothing is offered.
	Pending *Pending
	// Withheld lists, for a pending server, the tools pinned for it before:
	// they are unavailable with it. WithheldNames are the names they are
	// offered under, in the same order.
	Withheld      []string
	WithheldNames []string
}

// Held is one tool held back.
type Held struct {
	// Entry is the tool as the server offers it now.
	Entry catalog.Entry
	// New and NewHash are its definition now.
	New     Definition
	NewHash string
	// Old is the pinned definition; nil if the tool is new and its pin
	// could not be saved.
	Old *Tool
	// Changed names the fields that differ (FieldDescription, ...).
	Changed []string
	// Reason says why, for people: "its description changed since it was
	// accepted".
	Reason string
}

// Pending says why a server's definition is not trusted.
type Pending struct {
	// Reason is for people: "its command changed since it was approved".
	Reason string
	// Key is the trust key of the definition waiting for approval.
	Key     string
	Current Trust
	// Approved is the definition approved before; nil if none was.
	Approved   *Trust
	ApprovedAt time.Time
}

// Pending returns why server, configured as t, may not be started; nil if
// t is its approved definition.
func (s *Store) Pending(server string, t Trust) *Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked(server, t)
}

func (s *Store) pendingLocked(server string, t Trust) *Pending {
	key := t.Key()
	if s.broken != nil {
		return &Pending{Key: key, Current: t, Reason: fmt.Sprintf("the pins could not be loaded (%v)", s.broken)}
	}
	rec, ok := s.f.Servers[server]
	if ok && rec.Key == key || s.provisional[server] == key {
		return nil
	}
	p := &Pending{Key: key, Current: t, Reason: "it is new and no person has approved it yet"}
	if ok {
		approved := rec.Approved
		p.Approved, p.ApprovedAt = &approved, rec.ApprovedAt
		p.Reason = "its definition changed since it was approved"
		if parts := t.changes(approved); len(parts) > 0 {
			p.Reason = "its " + joinAnd(parts) + " changed since it was approved"
		}
	}
	return p
}

// Check decides which of a server's entries may reach models. A tool seen
// for the first time on a trusted server is pinned and offered; a tool whose
// definition differs from its pin is held back. If the new pins cannot be
// saved, the new tools are held back too, saying why: nothing is offered
// that is not pinned on disk. Checks that pin new tools at the same time
// share one write (commit.go). The per-server operations (read_resource,
// get_prompt) describe resources and prompts, which change in the normal
// course of things, and are not pinned.
func (s *Store) Check(server string, t Trust, entries []catalog.Entry) Decision {
	err := s.Pin(server, t, entries)
	if err == nil {
		// A tool still not pinned: its server's trust changed meanwhile,
		// and it is pending now.
		err = errors.New("its server's approval changed while it was being recorded")
	}
	d, _ := s.Decide(server, t, entries, err)
	return d
}

// Decide is Check without saving: a tool seen for the first time is
// neither offered nor held back, and unpinned says there are such tools,
// to be pinned with Check. If saveErr is set they are held back instead,
// saying that their pins could not be saved because of it.
func (s *Store) Decide(server string, t Trust, entries []catalog.Entry, saveErr error) (d Decision, unpinned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, fresh := s.decideLocked(server, t, entries, saveErr)
	return d, len(fresh) > 0
}

// decideLocked is Check's decision over the pins as they are. A tool not
// pinned yet is returned in fresh, and the decision is incomplete, unless
// saveErr says why it could not be pinned: then it is held back.
func (s *Store) decideLocked(server string, t Trust, entries []catalog.Entry, saveErr error) (d Decision, fresh map[string]hashed) {
	if p := s.pendingLocked(server, t); p != nil {
		d.Pending = p
		if rec, ok := s.f.Servers[server]; ok {
			d.Withheld = slices.Sorted(maps.Keys(rec.Tools))
			for _, tool := range d.Withheld {
				d.WithheldNames = append(d.WithheldNames, s.nameLocked(server, tool))
			}
		}
		return d, nil
	}
	rec := s.f.Servers[server]
	n := s.namerLocked(server)
	renamed := false
	for _, e := range entries {
		if name := n.name(e); name != e.Name {
			e.Name, renamed = name, true
		}
		if e.Kind != catalog.KindTool {
			d.Offered = append(d.Offered, e)
			continue
		}
		h := s.definitionLocked(e)
		def, hash := h.def, h.hash
		pin, pinned := rec.Tools[e.Tool]
		switch {
		case pinned && pin.Extra == nil && pin.Hash == h.legacy && saveErr == nil:
			// Pinned before Plexus passed definitions on whole: what a
			// person accepted is unchanged, and what is passed on now
			// beside it is seen for the first time — pinned as such.
			if fresh == nil {
				fresh = map[string]hashed{}
			}
			fresh[e.Tool] = h
		case pinned && (pin.Hash == hash || pin.Extra == nil && pin.Hash == h.legacy):
			d.Offered = append(d.Offered, e)
		case pinned:
			changed := def.changes(pin.Definition)
			old := pin
			d.Held = append(d.Held, Held{Entry: e, New: def, NewHash: hash, Old: &old, Changed: changed,
				Reason: "its " + joinAnd(fieldWords(changed)) + " changed since it was accepted"})
		case saveErr == nil:
			if fresh == nil {
				fresh = map[string]hashed{}
			}
			fresh[e.Tool] = h
		default:
			d.Held = append(d.Held, Held{Entry: e, New: def, NewHash: hash,
				Reason: fmt.Sprintf("it is new, and its definition could not be recorded: %v", saveErr)})
		}
	}
	if len(d.Offered) == len(entries) && len(entries) > 0 && !renamed {
		// Everything is offered, as after every start but the first: the
		// entries themselves, in their order, rather than a copy of them
		// kept beside them as long as the decision is.
		d.Offered = entries
	}
	return d, fresh
}

// Approve trusts t as the definition of server; the server's tool pins are
// kept, so a changed tool is still held back after its server is approved.
// If key is not empty it must be t's key: the definition a person was shown.
// The returned undo puts back what was there before, for a transaction that
// fails after the approval; it reports whether that could be saved.
func (s *Store) Approve(server string, t Trust, key string) (undo func() error, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if key != "" && key != t.Key() {
		return nil, &ChangedError{Server: server}
	}
	prev, had := s.f.Servers[server]
	if had && prev.Key == t.Key() {
		return func() error { return nil }, nil
	}
	next := s.clone()
	next.Servers[server] = s.approved(prev, t)
	if err := s.saveLocked(next, server); err != nil {
		return nil, err
	}
	return s.restorer(server, prev, had), nil
}

// Provisional trusts t for server in memory only, beside the approved
// definition, while a transaction that is to approve it runs: the server
// being prepared passes, and the one running under the approved definition
// keeps its tools meanwhile. commit records the approval (as Approve);
// abort drops it. One of the two must be called.
func (s *Store) Provisional(server string, t Trust) (commit func() error, abort func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provisional == nil {
		s.provisional = map[string]string{}
	}
	key := t.Key()
	s.provisional[server] = key
	s.touchLocked(server)
	drop := func() {
		if s.provisional[server] == key {
			delete(s.provisional, server)
			s.touchLocked(server)
		}
	}
	commit = func() error {
		_, err := s.Approve(server, t, "")
		s.mu.Lock()
		drop()
		s.mu.Unlock()
		return err
	}
	abort = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		drop()
	}
	return commit, abort
}

// Forget drops everything pinned for server, as when it is removed. The
// returned undo puts it back.
func (s *Store) Forget(server string) (undo func() error, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, had := s.f.Servers[server]
	if !had {
		return func() error { return nil }, nil
	}
	next := s.clone()
	delete(next.Servers, server)
	if err := s.saveLocked(next, server); err != nil {
		return nil, err
	}
	return s.restorer(server, prev, had), nil
}

// Accept re-pins held tools of server to their current definitions in
// entries: the named tools, or with all every held tool. expect maps a tool
// to the hash a person was shown; a tool that changed again since is
// refused with a *ChangedError. A named tool that is not held back is a
// *NotHeldError. It returns the tools accepted, sorted.
func (s *Store) Accept(server string, t Trust, entries []catalog.Entry, tools []string, all bool, expect map[string]string) ([]string, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.f.Servers[server]
	if !ok || rec.Key != t.Key() {
		return nil, &NotHeldError{Server: server, Tool: strings.Join(tools, ", "), Pending: true}
	}
	current := map[string]catalog.Entry{}
	for _, e := range entries {
		if e.Kind == catalog.KindTool {
			current[e.Tool] = e
		}
	}
	isHeld := func(name string) (Tool, bool) {
		e, offered := current[name]
		if !offered {
			return Tool{}, false
		}
		h := s.definitionLocked(e)
		pin, pinned := rec.Tools[name]
		return Tool{Hash: h.hash, Definition: h.def}, !pinned || pin.Hash != h.hash
	}
	chosen := map[string]Tool{}
	if all {
		for name := range current {
			if nt, held := isHeld(name); held {
				chosen[name] = nt
			}
		}
	}
	for _, name := range tools {
		nt, held := isHeld(name)
		if !held {
			_, offered := current[name]
			return nil, &NotHeldError{Server: server, Tool: name, Offered: offered}
		}
		chosen[name] = nt
	}
	for name, nt := range chosen {
		if want := expect[name]; want != "" && want != nt.Hash {
			return nil, &ChangedError{Server: server, Tool: name}
		}
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	next := s.clone()
	r := next.Servers[server]
	r.Tools = maps.Clone(r.Tools)
	if r.Tools == nil {
		r.Tools = map[string]Tool{}
	}
	now := s.now().UTC()
	for name, nt := range chosen {
		nt.PinnedAt = now
		chosen[name] = nt
	}
	nameNew(server, next.Servers[server], chosen, takenNames(next))
	maps.Copy(r.Tools, chosen)
	next.Servers[server] = r
	if err := s.saveLocked(next, server); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(chosen)), nil
}

// NotHeldError says a tool to accept is not held back.
type NotHeldError struct {
	Server, Tool string
	// Offered: the server offers the tool, unchanged.
	Offered bool
	// Pending: the server itself waits for approval.
	Pending bool
}

func (e *NotHeldError) Error() string {
	switch {
	case e.Pending:
		return fmt.Sprintf("server %s needs approval before its tools can be accepted", e.Server)
	case e.Offered:
		return fmt.Sprintf("tool %s of server %s is not held back: it has not changed since it was accepted", e.Tool, e.Server)
	}
	return fmt.Sprintf("server %s offers no tool named %q", e.Server, e.Tool)
}

// ChangedError says that what a person reviewed is no longer what it
// approves or accepts: the definition changed again in between.
type ChangedError struct {
	Server string
	Tool   string // empty for the server's own definition
}

func (e *ChangedError) Error() string {
	if e.Tool == "" {
		return fmt.Sprintf("the definition of server %s changed again since it was shown: nothing was approved", e.Server)
	}
	return fmt.Sprintf("tool %s of server %s changed again since it was shown: nothing was accepted", e.Tool, e.Server)
}

// approved returns rec trusting t as of now, keeping its tool pins.
func (s *Store) approved(rec Server, t Trust) Server {
	normalizeTrust(&t)
	rec.Key, rec.Approved, rec.ApprovedAt = t.Key(), t, s.now().UTC()
	return rec
}

// restorer returns an undo that puts server's record back as prev (or
// removes it if there was none).
func (s *Store) restorer(server string, prev Server, had bool) func() error {
	return func() error {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		next := s.clone()
		if had {
			next.Servers[server] = prev
		} else {
			delete(next.Servers, server)
		}
		return s.saveLocked(next, server)
	}
}

// clone copies the file's top level; records are replaced, never mutated.
func (s *Store) clone() *File {
	return &File{Revision: s.f.Revision, Servers: maps.Clone(s.f.Servers)}
}

// saveLocked writes next, which changes server's record, as the next
// revision and, once it is durable, keeps in memory exactly what a later
// Open will read back. The caller holds writeMu and mu.
func (s *Store) saveLocked(next *File, server string) error {
	next.Revision = s.f.Revision + 1
	written, err := s.write(next)
	if err != nil {
		return err
	}
	// next is a fresh copy nobody else holds; decoding what was just
	// encoded would only cost (the file is checked when it is loaded).
	s.touchChangedLocked(written)
	s.f = written
	s.touchLocked(server)
	return nil
}

// touchChangedLocked records a change of every server whose record
// differs between the pins in memory and next.
func (s *Store) touchChangedLocked(next *File) {
	for name := range changedServers(s.f, next) {
		s.touchLocked(name)
	}
}

// write encodes next, the pins in memory (s.f) with some servers'
// records changed, and writes it durably; it returns what it wrote. The
// caller holds writeMu.
//
// pins.json is one document that the replicas of a team share. When
// another replica saved it since this one read it, the write is redone on
// what that replica saved, with only the records next changes taken from
// next: each replica's approvals, pins and removals are kept, and the
// other replica's never overwritten by a stale copy (a server approved
// through one replica needed approval again once another saved its pins).
func (s *Store) write(next *File) (*File, error) {
	if s.broken != nil {
		return nil, fmt.Errorf("saving pins: they could not be loaded: %w", s.broken)
	}
	if next.Servers == nil {
		next.Servers = map[string]Server{}
	}
	base, prev := s.f, s.doc
	changed := changedServers(base, next)
	for try := 0; ; try++ {
		data, err := encodeFile(next)
		if err != nil {
			return nil, fmt.Errorf("saving pins: %w", err)
		}
		doc, err := s.docs.Write(FileName, prev, data, false)
		var stale *docstore.StaleError
		if !errors.As(err, &stale) || try == maxMerges {
			if err != nil {
				return nil, fmt.Errorf("saving pins: %w", err)
			}
			s.doc = doc.Digest()
			return next, nil
		}
		theirs, derr := Decode(stale.Current.Data)
		if derr != nil || !stale.Current.Exists {
			// Nothing to merge with: this replica's pins, as before.
			theirs = &File{}
		}
		next = merged(theirs, next, changed)
		prev = stale.Current
	}
}

// maxMerges bounds how often a write is redone on another replica's save.
const maxMerges = 8

// changedServers are the servers whose records differ between base and
// next (added, changed or removed).
func changedServers(base, next *File) map[string]bool {
	out := map[string]bool{}
	for name, rec := range next.Servers {
		if old, ok := base.Servers[name]; !ok || !reflect.DeepEqual(old, rec) {
			out[name] = true
		}
	}
	for name := range base.Servers {
		if _, ok := next.Servers[name]; !ok {
			out[name] = true
		}
	}
	return out
}

// merged is theirs with the records of changed taken from ours.
func merged(theirs, ours *File, changed map[string]bool) *File {
	out := &File{Revision: max(theirs.Revision, ours.Revision-1) + 1, Servers: maps.Clone(theirs.Servers)}
	if out.Servers == nil {
		out.Servers = map[string]Server{}
	}
	for name := range changed {
		if rec, ok := ours.Servers[name]; ok {
			out.Servers[name] = rec
		} else {
			delete(out.Servers, name)
		}
	}
	return out
}

// fieldWords turns field names into words for people.
func fieldWords(fields []string) []string {
	words := map[string]string{
		FieldTitle: "title", FieldDescription: "description", FieldInputSchema: "input schema",
		FieldOutputSchema: "output schema", FieldAnnotations: "annotations",
		FieldExtra: "other members (_meta, execution, icons…)",
	}
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, words[f])
	}
	if len(out) == 0 {
		out = append(out, "definition")
	}
	return out
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
