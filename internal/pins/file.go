package pins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/jsonerr"
)

// FileName is the name of the pins file under the home directory.
const FileName = "pins.json"

// File is the content of pins.json.
//
// Records are never changed in place: a change copies the server's record
// (and its tool map), so that a File handed out stays as it was.
type File struct {
	// Revision counts the daemon's saves.
	Revision int64             `json:"revision"`
	Servers  map[string]Server `json:"servers"`
}

// Server is what a person trusted of one server.
type Server struct {
	// Key is Approved.Key(), kept so that the file says what it pins.
	Key        string    `json:"key"`
	Approved   Trust     `json:"approved"`
	ApprovedAt time.Time `json:"approvedAt"`
	// Tools are the pinned tools by their upstream name.
	Tools map[string]Tool `json:"tools,omitempty"`
}

// Tool is one pinned tool: the definition a person accepted (or that was
// first seen) and its hash.
type Tool struct {
	Hash string `json:"hash"`
	// Name is the name the tool is offered under in the readable scheme,
	// given out when it was first pinned (names.go); empty in a pin made
	// before that scheme, whose tool keeps its hashed catalog.ToolName so
	// that a person's permission rules still match it.
	Name string `json:"name,omitempty"`
	Definition
	PinnedAt time.Time `json:"pinnedAt"`
}

// DecodeError lists every problem of a pins file, each with its key path.
type DecodeError struct {
	Problems []string
}

func (e *DecodeError) Error() string {
	return FileName + " is not valid: " + strings.Join(e.Problems, "; ")
}

// Decode reads pins.json strictly: unknown keys, duplicate keys, trailing
// data and wrong types are errors, and so is a key or hash that does not
// match what it pins (the file was changed outside Plexus). JSON values
// are made canonical, so Decode(Encode(f)) equals f.
func Decode(data []byte) (*File, error) {
	if err := checkStructure(data); err != nil {
		return nil, &DecodeError{Problems: []string{err.Error()}}
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, &DecodeError{Problems: []string{jsonerr.Describe(err)}}
	}
	var problems []string
	bad := func(path, format string, args ...any) {
		problems = append(problems, path+": "+fmt.Sprintf(format, args...))
	}
	if f.Revision < 0 {
		bad("revision", "is negative")
	}
	if f.Servers == nil {
		f.Servers = map[string]Server{}
	}
	for _, name := range slices.Sorted(maps.Keys(f.Servers)) {
		rec := f.Servers[name]
		path := "servers." + strconv.Quote(name)
		if name == "" {
			bad(path, "a server name is empty")
		}
		normalizeTrust(&rec.Approved)
		if rec.Approved.Type == "" {
			bad(path+".approved.type", "is empty")
		}
		if rec.Key != rec.Approved.Key() {
			bad(path+".key", "does not match the approved definition")
		}
		if len(rec.Tools) == 0 {
			rec.Tools = nil
		}
		for _, tool := range slices.Sorted(maps.Keys(rec.Tools)) {
			p := rec.Tools[tool]
			tpath := path + ".tools." + strconv.Quote(tool)
			if tool == "" {
				bad(tpath, "a tool name is empty")
			}
			ok := true
			for field, raw := range map[string]*json.RawMessage{
				"inputSchema": &p.InputSchema, "outputSchema": &p.OutputSchema, "annotations": &p.Annotations, "extra": &p.Extra,
			} {
				if field == "extra" && *raw != nil && string(bytes.TrimSpace(*raw)) == "{}" {
					*raw = noExtra // kept: {} is not the nil of a pin made before extra
					continue
				}
				c, err := canonical(*raw)
				if err != nil {
					bad(tpath+"."+field, "is not valid JSON")
					ok = false
					continue
				}
				*raw = c
			}
			if ok && p.Hash != p.Definition.Hash(tool) {
				bad(tpath+".hash", "does not match the pinned definition")
			}
			if p.Name != "" && !catalog.ValidName(p.Name) {
				bad(tpath+".name", "is not a name clients accept (^[a-zA-Z0-9_-]{1,64}$)")
			}
			p.PinnedAt = p.PinnedAt.UTC()
			rec.Tools[tool] = p
		}
		rec.ApprovedAt = rec.ApprovedAt.UTC()
		f.Servers[name] = rec
	}
	problems = append(problems, duplicateNames(&f)...)
	if len(problems) > 0 {
		return nil, &DecodeError{Problems: problems}
	}
	return &f, nil
}

// normalizeTrust makes empty lists and maps nil, as Encode leaves them out.
func normalizeTrust(t *Trust) {
	if len(t.Args) == 0 {
		t.Args = nil
	}
	if len(t.Env) == 0 {
		t.Env = nil
	}
	if len(t.Headers) == 0 {
		t.Headers = nil
	}
	if t.OAuth != nil && len(t.OAuth.Scopes) == 0 {
		t.OAuth.Scopes = nil
	}
}

// maxDepth bounds the nesting of pins.json; the file nests five levels
// itself, schemas a bounded number more (catalog.Limits).
const maxDepth = 200

// checkStructure walks the JSON tokens once: one top-level object, no
// duplicate key in any object, nothing after it, and a bounded depth.
func checkStructure(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return errors.New(jsonerr.Describe(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("the file must hold one JSON object")
	}
	// frame is one open container: an object (keys != nil) or an array.
	type frame struct {
		path      string
		keys      map[string]bool
		key       string // the object's current key
		expectKey bool
	}
	stack := []frame{{keys: map[string]bool{}, expectKey: true}}
	for len(stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return errors.New(jsonerr.Describe(err))
		}
		top := &stack[len(stack)-1]
		d, isDelim := tok.(json.Delim)
		if isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top.keys != nil && top.expectKey {
			key, _ := tok.(string) // the decoder allows nothing else here
			if top.keys[key] {
				if top.path == "" {
					return fmt.Errorf("the key %q appears twice", key)
				}
				return fmt.Errorf("the key %q appears twice in %s", key, top.path)
			}
			top.keys[key], top.key, top.expectKey = true, key, false
			continue
		}
		// A value. In an object, a key comes next.
		child := top.path + "[]"
		if top.keys != nil {
			top.expectKey = true
			child = strings.TrimPrefix(top.path+"."+top.key, ".")
		}
		if isDelim {
			f := frame{path: child}
			if d == '{' {
				f.keys, f.expectKey = map[string]bool{}, true
			}
			stack = append(stack, f)
			if len(stack) > maxDepth {
				return fmt.Errorf("the file nests deeper than %d levels", maxDepth)
			}
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the top-level object")
	}
	return nil
}
