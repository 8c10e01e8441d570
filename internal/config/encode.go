package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Encode writes f as extensions.json: indented by two spaces, map keys
// sorted, a trailing newline, no HTML escaping. The output depends only on f,
// so saving an unchanged configuration changes no byte, and Decode reads it
// back to an equal File.
//
// Encode does not validate; the daemon validates before it saves.
func Encode(f *File) ([]byte, error) {
	if f == nil {
		return nil, errors.New("config: encode: no configuration")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("config: encode: %w", err)
	}
	return buf.Bytes(), nil
}
