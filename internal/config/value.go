package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MarshalJSON writes the reference form {"env": "VAR"} when Env is set, and
// the string otherwise.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Env != "" && v.Text != "" {
		return nil, errors.New("config: header value has both env and text")
	}
	if v.Env != "" {
		return marshalPlain(Ref{Env: v.Env})
	}
	return marshalPlain(v.Text)
}

// UnmarshalJSON accepts a string or {"env": "VAR"} and nothing else. It serves
// API requests; Decode has its own, stricter walk of extensions.json.
func (v *Value) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil // encoding/json's convention: null leaves the value alone
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*v = Value{Text: s}
		return nil
	}
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("config: header value: want a string or %s", refForm)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Ref
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("config: header value: %w", err)
	}
	if r.Env == "" {
		return fmt.Errorf("config: header value: want a string or %s", refForm)
	}
	*v = Value{Env: r.Env}
	return nil
}

// marshalPlain is json.Marshal without HTML escaping, so that a header such as
// "<token>" stays readable in the file.
func marshalPlain(x any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
