package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// prepareSchema turns a schema as the server wrote it into compact JSON,
// checks it against the limits, and cleans the description and title of
// every subschema: property descriptions reach the model as surely as the
// tool's own (R-CAT-7). Values that take part in validation (enum, const,
// default, pattern) are left exactly as they are, or calls would stop
// validating.
//
// A missing or JSON null schema yields nil. Anything but a JSON object is
// an error.
func prepareSchema(raw json.RawMessage, l Limits) (json.RawMessage, error) {
	root, err := decodeSchema(raw, l)
	if root == nil || err != nil {
		return nil, err
	}
	w := schemaWalker{limits: l, clean: Clean}
	if err := w.walk(root, 1); err != nil {
		return nil, err
	}
	out, err := marshalCompact(root)
	if err == nil && bytes.Equal(out, raw) {
		// The server's schema was already in this form: the entry shares
		// its bytes rather than holding a copy.
		return raw, nil
	}
	return out, err
}

// decodeSchema decodes a schema after checking its compact size; nil for
// a missing or null one.
func decodeSchema(raw json.RawMessage, l Limits) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	// Checked on the compact form before decoding, so that an enormous schema
	// costs no more than one pass.
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	if compact.Len() > l.MaxSchemaBytes {
		return nil, fmt.Errorf("is %d bytes, over the limit of %d bytes", compact.Len(), l.MaxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(compact.Bytes()))
	dec.UseNumber() // keep numbers exactly as written
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is not a JSON object")
	}
	return root, nil
}

// schemaHidesText reports whether a schema, already prepared (so valid
// and within the limits), has a description or title that WireText would
// change. Most have none: their bytes pass on untouched.
func schemaHidesText(raw json.RawMessage) bool {
	if !bytes.Contains(raw, []byte("<!--")) && !bytes.ContainsFunc(raw, func(r rune) bool {
		return r >= 0x80 || (r < 0x20 && r != '\t' && r != '\n' && r != '\r')
	}) && !bytes.Contains(raw, []byte(`\u`)) {
		return false // plain ASCII without escapes: nothing can hide
	}
	root, err := decodeSchema(raw, Limits{}.withDefaults())
	if err != nil || root == nil {
		return false
	}
	w := schemaWalker{limits: Limits{MaxSchemaDepth: 1 << 20, MaxSchemaProperties: 1 << 30}, clean: WireText}
	w.walk(root, 1)
	return w.changed
}

// wireSchema is a schema whose descriptions and titles WireText cleaned,
// as compact JSON (key order is lost: the schema had hidden text).
func wireSchema(raw json.RawMessage) (json.RawMessage, error) {
	root, err := decodeSchema(raw, Limits{MaxSchemaBytes: 1 << 30})
	if err != nil {
		return nil, err
	}
	w := schemaWalker{limits: Limits{MaxSchemaDepth: 1 << 20, MaxSchemaProperties: 1 << 30}, clean: WireText}
	if err := w.walk(root, 1); err != nil {
		return nil, err
	}
	return marshalCompact(root)
}

// marshalCompact encodes v without HTML escaping: "<" as "\u003c" helps no
// browser here and only costs a model tokens.
func marshalCompact(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// A copy of its length: the buffer has grown past it, and entries are
	// kept for as long as their server runs.
	return json.RawMessage(bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n"))), nil
}

// Keywords whose values are subschemas, by shape (JSON Schema 2020-12, with
// the draft-07 spellings still common among MCP servers).
var (
	schemaMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true,
		"$defs": true, "definitions": true, "dependentSchemas": true, "dependencies": true,
	}
	schemaOneKeywords = map[string]bool{
		"items": true, "additionalItems": true, "additionalProperties": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contains": true,
		"propertyNames": true, "not": true, "if": true, "then": true, "else": true,
		"contentSchema": true,
	}
	schemaListKeywords = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true,
		"items": true, // draft-07 tuple form
	}
)

// schemaWalker visits the subschemas of one schema, counting properties and
// tracking depth. It stops at the first limit exceeded, so its work is
// bounded by the limits and not by the schema.
type schemaWalker struct {
	limits Limits
	props  int
	// clean is applied to every description and title; changed is set
	// when it changed one.
	clean   func(string) string
	changed bool
}

func (w *schemaWalker) walk(v any, depth int) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil // true/false schemas, or non-schema values under "dependencies"
	}
	if depth > w.limits.MaxSchemaDepth {
		return fmt.Errorf("nests subschemas deeper than the limit of %d levels", w.limits.MaxSchemaDepth)
	}
	// Sorted, so that which limit is reported first does not depend on map
	// iteration order.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val := m[k]
		switch {
		case k == "description" || k == "title":
			if s, ok := val.(string); ok {
				if c := w.clean(s); c != s {
					m[k] = c
					w.changed = true
				}
			}
		case schemaMapKeywords[k]:
			sub, ok := val.(map[string]any)
			if !ok {
				continue
			}
			if k == "properties" || k == "patternProperties" {
				w.props += len(sub)
				if w.props > w.limits.MaxSchemaProperties {
					return fmt.Errorf("declares more than the limit of %d properties", w.limits.MaxSchemaProperties)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(sub)) {
				if err := w.walk(sub[name], depth+1); err != nil {
					return err
				}
			}
		case schemaListKeywords[k]:
			if list, ok := val.([]any); ok {
				for _, item := range list {
					if err := w.walk(item, depth+1); err != nil {
						return err
					}
				}
				continue
			}
			if schemaOneKeywords[k] {
				if err := w.walk(val, depth+1); err != nil {
					return err
				}
			}
		case schemaOneKeywords[k]:
			if err := w.walk(val, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
