// Package catcache keeps each server's catalog on disk — its tools,
// resources, templates and prompts, and its answer to the handshake (its
// capabilities and instructions) — as the bytes the server wrote, in
// catalogs.json beside pins.json in Plexus's home. A server started on
// demand is listed from it while it is stopped: its tools keep their names
// for every client, and no process runs until one is used.
//
// The file is a cache, and outside input on the next start: it is decoded
// strictly and bounded, and one that does not decode is reported and
// started over, never trusted in part. What a cached entry lists is only a
// listing: the server's own lists replace it as soon as it starts, and a
// changed tool goes through pinning as any other does.
package catcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/plexus-mcp/plexus/internal/atomicfile"
)

// FileName is the cache's file in Plexus's home.
const FileName = "catalogs.json"

// MaxFileBytes bounds the file: a cache larger than this is not read.
const MaxFileBytes = 64 << 20

// version is the file's format; another one is started over.
const version = 1

// Entry is one server's catalog as it last listed it.
type Entry struct {
	// Key identifies the definition the catalog was listed from (Key):
	// an entry of another definition is not used.
	Key       string            `json:"key"`
	Listed    time.Time         `json:"listed"`
	Init      json.RawMessage   `json:"initialize,omitempty"`
	Tools     []json.RawMessage `json:"tools,omitempty"`
	Resources []json.RawMessage `json:"resources,omitempty"`
	Templates []json.RawMessage `json:"resourceTemplates,omitempty"`
	Prompts   []json.RawMessage `json:"prompts,omitempty"`
}

type file struct {
	Version int              `json:"version"`
	Servers map[string]Entry `json:"servers"`
}

// Key is the key of a server's definition: any JSON encoding of it that
// changes when the definition does.
func Key(definition any) string {
	b, _ := json.Marshal(definition)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Decode reads the file strictly: unknown keys, trailing data, another
// version, a list member that is not a JSON object with a non-empty
// "name" (a resource's "uri", a template's "uriTemplate") are errors.
func Decode(data []byte) (map[string]Entry, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", FileName, MaxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s is not valid: %w", FileName, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s is not valid: trailing data", FileName)
	}
	if f.Version != version {
		return nil, fmt.Errorf("%s has version %d, not %d", FileName, f.Version, version)
	}
	for name, e := range f.Servers {
		if name == "" || len(e.Key) != 64 {
			return nil, fmt.Errorf("%s is not valid: server %q has no key", FileName, name)
		}
		if len(e.Init) > 0 && !isObject(e.Init) {
			return nil, fmt.Errorf("%s is not valid: server %q: initialize is not an object", FileName, name)
		}
		for _, l := range []struct {
			what, member string
			items        []json.RawMessage
		}{{"tools", "name", e.Tools}, {"resources", "uri", e.Resources}, {"resourceTemplates", "uriTemplate", e.Templates}, {"prompts", "name", e.Prompts}} {
			for i, raw := range l.items {
				if !hasString(raw, l.member) {
					return nil, fmt.Errorf("%s is not valid: server %q: %s[%d] has no %q", FileName, name, l.what, i, l.member)
				}
			}
		}
	}
	if f.Servers == nil {
		f.Servers = map[string]Entry{}
	}
	return f.Servers, nil
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

func hasString(raw json.RawMessage, member string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	var s string
	return json.Unmarshal(m[member], &s) == nil && s != ""
}

// Encode writes the file, servers sorted, for Decode. Each definition is
// written as the server wrote it, byte for byte (a JSON encoder would
// compact it): Decode gives the same bytes back.
func Encode(servers map[string]Entry) ([]byte, error) {
	names := make([]string, 0, len(servers))
	for k := range servers {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\"version\": %d, \"servers\": {", version)
	for i, name := range names {
		e := servers[name]
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		key, _ := json.Marshal(e.Key)
		listed, err := json.Marshal(e.Listed)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n  %s: {\"key\": %s, \"listed\": %s", k, key, listed)
		if len(e.Init) > 0 {
			if !json.Valid(e.Init) {
				return nil, fmt.Errorf("server %q: initialize is not valid JSON", name)
			}
			b.WriteString(", \"initialize\": ")
			b.Write(e.Init)
		}
		for _, l := range []struct {
			what  string
			items []json.RawMessage
		}{{"tools", e.Tools}, {"resources", e.Resources}, {"resourceTemplates", e.Templates}, {"prompts", e.Prompts}} {
			if len(l.items) == 0 {
				continue
			}
			fmt.Fprintf(&b, ",\n    %q: [", l.what)
			for j, raw := range l.items {
				if !json.Valid(raw) {
					return nil, fmt.Errorf("server %q: %s[%d] is not valid JSON", name, l.what, j)
				}
				if j > 0 {
					b.WriteString(",\n      ")
				}
				b.Write(raw)
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteString("}}\n")
	return b.Bytes(), nil
}

// Store is the cache of one home. Its methods are safe for concurrent use.
type Store struct {
	path string
	mu   sync.Mutex // guards m and the file's writes
	m    map[string]Entry
}

// Open reads the cache in dir. A file that is missing is an empty cache;
// one that does not decode is an empty cache too, with the error that says
// why (the caller logs it): the next save replaces it.
func Open(dir string) (*Store, error) {
	s := &Store{path: filepath.Join(dir, FileName), m: map[string]Entry{}}
	data, err := readBounded(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	m, err := Decode(data)
	if err != nil {
		return s, err
	}
	s.m = m
	return s, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Get returns server name's entry if it was listed from the definition
// whose key is key.
func (s *Store) Get(name, key string) (Entry, bool) {
	if s == nil {
		return Entry{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[name]
	if !ok || e.Key != key {
		return Entry{}, false
	}
	return e, true
}

// Put keeps server name's entry and saves the file (atomically, 0600),
// unless it holds the same lists already.
func (s *Store) Put(name string, e Entry) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[name]; ok && sameLists(old, e) {
		return nil
	}
	next := make(map[string]Entry, len(s.m)+1)
	for k, v := range s.m {
		next[k] = v
	}
	next[name] = e
	if err := s.saveLocked(next); err != nil {
		return err
	}
	s.m = next
	return nil
}

// Forget drops server name's entry (a removed server), saving the file.
func (s *Store) Forget(name string) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[name]; !ok {
		return nil
	}
	next := make(map[string]Entry, len(s.m))
	for k, v := range s.m {
		if k != name {
			next[k] = v
		}
	}
	if err := s.saveLocked(next); err != nil {
		return err
	}
	s.m = next
	return nil
}

// Names returns the servers that have an entry, sorted.
func (s *Store) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for k := range s.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *Store) saveLocked(m map[string]Entry) error {
	data, err := Encode(m)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path, data, 0o600)
}

func sameLists(a, b Entry) bool {
	if a.Key != b.Key || !bytes.Equal(a.Init, b.Init) {
		return false
	}
	for _, p := range [][2][]json.RawMessage{{a.Tools, b.Tools}, {a.Resources, b.Resources}, {a.Templates, b.Templates}, {a.Prompts, b.Prompts}} {
		if len(p[0]) != len(p[1]) {
			return false
		}
		for i := range p[0] {
			if !bytes.Equal(p[0][i], p[1][i]) {
				return false
			}
		}
	}
	return true
}
