package pins

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// encodeFile encodes f as pins.json: what encoding/json's Encoder with
// SetIndent("", "  ") and SetEscapeHTML(false) writes, byte for byte
// (reference_test.go keeps that encoder as the reference).
//
// It writes the pinned tools itself rather than through encoding/json,
// whose encoding of thousands of schemas (each json.RawMessage scanned to
// compact it, then the whole scanned again to indent it) cost 70 ms for
// 5,000 tools at every save: a cache of each server's encoding between
// saves bought that time back once, for as many bytes of memory as the file
// has. Here each schema is scanned once, by json.Indent, and nothing is
// kept between saves.
func encodeFile(f *File) ([]byte, error) {
	e := fileEncoder{}
	e.buf.WriteString("{\n  \"revision\": " + strconv.FormatInt(f.Revision, 10) + ",\n  \"servers\": ")
	if len(f.Servers) == 0 {
		e.buf.WriteString("{}\n}\n")
		return e.buf.Bytes(), nil
	}
	e.buf.WriteString("{\n")
	names := slices.Sorted(maps.Keys(f.Servers))
	for i, name := range names {
		e.buf.WriteString("    ")
		if err := e.value(name, ""); err != nil {
			return nil, err
		}
		e.buf.WriteString(": ")
		if err := e.server(f.Servers[name]); err != nil {
			return nil, err
		}
		if i < len(names)-1 {
			e.buf.WriteByte(',')
		}
		e.buf.WriteByte('\n')
	}
	e.buf.WriteString("  }\n}\n")
	return e.buf.Bytes(), nil
}

// fileEncoder writes the parts of a pins file into buf.
type fileEncoder struct {
	buf     bytes.Buffer
	scratch bytes.Buffer
	enc     *json.Encoder // into scratch
}

// value writes v as encoding/json's indenting encoder does at the depth
// that prefix stands for, without a final newline.
func (e *fileEncoder) value(v any, prefix string) error {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.scratch)
		e.enc.SetEscapeHTML(false)
	}
	e.scratch.Reset()
	e.enc.SetIndent(prefix, "  ")
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	e.buf.Write(bytes.TrimSuffix(e.scratch.Bytes(), []byte("\n")))
	return nil
}

// server writes one server's record at depth 2.
func (e *fileEncoder) server(rec Server) error {
	// The record without its tools, by encoding/json: its fields are few
	// and small. Tools is the last field, so the record's closing brace is
	// where the tools go.
	head := rec
	head.Tools = nil
	if err := e.value(head, "    "); err != nil {
		return err
	}
	if len(rec.Tools) == 0 {
		return nil
	}
	e.buf.Truncate(e.buf.Len() - len("\n    }"))
	e.buf.WriteString(",\n      \"tools\": {\n")
	names := slices.Sorted(maps.Keys(rec.Tools))
	for i, name := range names {
		e.buf.WriteString("        ")
		if err := e.value(name, ""); err != nil {
			return err
		}
		e.buf.WriteString(": ")
		if err := e.tool(rec.Tools[name]); err != nil {
			return err
		}
		if i < len(names)-1 {
			e.buf.WriteByte(',')
		}
		e.buf.WriteByte('\n')
	}
	e.buf.WriteString("      }\n    }")
	return nil
}

// tool writes one pinned tool at depth 4, its fields in Tool's order.
func (e *fileEncoder) tool(t Tool) error {
	const in = "          "
	field := func(name string) {
		e.buf.WriteString(in + `"` + name + `": `)
	}
	e.buf.WriteString("{\n")
	field("hash")
	if err := e.value(t.Hash, ""); err != nil {
		return err
	}
	if t.Name != "" {
		e.buf.WriteString(",\n")
		field("name")
		if err := e.value(t.Name, ""); err != nil {
			return err
		}
	}
	if t.Title != "" {
		e.buf.WriteString(",\n")
		field("title")
		if err := e.value(t.Title, ""); err != nil {
			return err
		}
	}
	e.buf.WriteString(",\n")
	field("description")
	if err := e.value(t.Description, ""); err != nil {
		return err
	}
	for _, raw := range []struct {
		name string
		v    json.RawMessage
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}, {"annotations", t.Annotations}, {"extra", t.Extra}} {
		if len(raw.v) == 0 {
			continue
		}
		e.buf.WriteString(",\n")
		field(raw.name)
		if err := e.raw(raw.v, in); err != nil {
			return err
		}
	}
	e.buf.WriteString(",\n")
	field("pinnedAt")
	at, err := t.PinnedAt.MarshalJSON()
	if err != nil {
		return err
	}
	e.buf.Write(at)
	e.buf.WriteString("\n        }")
	return nil
}

// raw writes JSON as encoding/json writes a json.RawMessage: compacted,
// then indented with the rest. json.Indent drops the insignificant space
// inside a value by itself, so it compacts as it indents.
func (e *fileEncoder) raw(v json.RawMessage, prefix string) error {
	return json.Indent(&e.buf, bytes.TrimRight(v, " \t\r\n"), prefix, "  ")
}
