// Package creds is the codec of creds.json, the managed environment (the
// secrets) the daemon resolves { "env": "VAR" } references from.
//
// creds.json is mode 0600 in a 0700 directory and written only by the daemon.
package creds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/plexus-mcp/plexus/internal/jsonerr"
)

// File is the content of creds.json.
type File struct {
	Revision int64 `json:"revision"`
	// Env is the managed environment: variable name → value.
	Env map[string]string `json:"env"`
	// Owners maps a variable to the server whose form set it (a secret
	// typed into a server's settings); deleting that server deletes it.
	// Variables set with `plexus secret set` have no owner.
	Owners map[string]string `json:"owners,omitempty"`
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidName reports whether name is a valid variable name.
func ValidName(name string) bool { return varName.MatchString(name) }

// Decode reads creds.json strictly: unknown keys and trailing data are
// errors. Errors never quote the file's content, since it holds secrets.
func Decode(data []byte) (*File, error) {
	f := &File{Env: map[string]string{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("creds.json is not valid: %s", jsonerr.Describe(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("creds.json is not valid: trailing data after the top-level object")
	}
	if f.Env == nil {
		f.Env = map[string]string{}
	}
	for name := range f.Env {
		if !ValidName(name) {
			return nil, fmt.Errorf("creds.json is not valid: env: %q is not a valid variable name", name)
		}
	}
	return f, nil
}

// Encode writes the file deterministically.
func Encode(f *File) ([]byte, error) {
	out := struct {
		Revision int64             `json:"revision"`
		Env      map[string]string `json:"env"`
		Owners   map[string]string `json:"owners,omitempty"`
	}{f.Revision, f.Env, f.Owners}
	if out.Env == nil {
		out.Env = map[string]string{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Names returns the variable names, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Env))
	for n := range f.Env {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Clone returns a deep copy.
func (f *File) Clone() *File {
	c := &File{Revision: f.Revision, Env: make(map[string]string, len(f.Env))}
	for k, v := range f.Env {
		c.Env[k] = v
	}
	if len(f.Owners) > 0 {
		c.Owners = make(map[string]string, len(f.Owners))
		for k, v := range f.Owners {
			c.Owners[k] = v
		}
	}
	return c
}
