package pins

import (
	"bytes"
	"encoding/json"
)

// Encode is the plain encoding of f as indented JSON with a final newline:
// the reference the daemon's incremental encoder (encode) must match byte
// for byte.
func Encode(f *File) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
