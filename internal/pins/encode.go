package pins

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
)

// encodedRecords keeps the encoding of each server's record between saves:
// a save changes one server's record, or a few, and re-encoding every
// server's pinned schemas each time cost the daemon most of its start with
// thousands of tools. Guarded by the Store's writeMu.
type encodedRecords map[string]encodedRecord

type encodedRecord struct {
	// rec is the record encoded. Records are replaced, never changed
	// (File), so its tool map's identity, with its key and approval time,
	// says it is the same; keeping it keeps the map's address from being
	// reused.
	rec  Server
	data []byte
}

func sameRecord(a, b Server) bool {
	return a.Key == b.Key && a.ApprovedAt.Equal(b.ApprovedAt) && len(a.Tools) == len(b.Tools) &&
		reflect.ValueOf(a.Tools).Pointer() == reflect.ValueOf(b.Tools).Pointer()
}

// encode is Encode(f), byte for byte, re-encoding only the records that
// changed since the last call; it forgets the servers f no longer has.
func (c *encodedRecords) encode(f *File) ([]byte, error) {
	if *c == nil {
		*c = encodedRecords{}
	}
	var buf bytes.Buffer
	buf.WriteString("{\n  \"revision\": " + strconv.FormatInt(f.Revision, 10) + ",\n  \"servers\": ")
	if len(f.Servers) == 0 {
		buf.WriteString("{}\n}\n")
		clear(*c)
		return buf.Bytes(), nil
	}
	buf.WriteString("{\n")
	names := slices.Sorted(maps.Keys(f.Servers))
	for i, name := range names {
		rec := f.Servers[name]
		e, ok := (*c)[name]
		if !ok || !sameRecord(e.rec, rec) {
			data, err := encodeIndented(rec, "    ")
			if err != nil {
				return nil, err
			}
			e = encodedRecord{rec: rec, data: data}
			(*c)[name] = e
		}
		key, err := encodeIndented(name, "")
		if err != nil {
			return nil, err
		}
		buf.WriteString("    ")
		buf.Write(key)
		buf.WriteString(": ")
		buf.Write(e.data)
		if i < len(names)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  }\n}\n")
	for name := range *c {
		if _, ok := f.Servers[name]; !ok {
			delete(*c, name)
		}
	}
	return buf.Bytes(), nil
}

// encodeIndented encodes v as Encode does at the given depth, without the
// final newline.
func encodeIndented(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
