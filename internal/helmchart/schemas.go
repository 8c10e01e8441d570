// Package helmchart turns the Kubernetes OpenAPI (v2) document that a Go
// module ships into the JSON schemas kubeconform validates against, offline:
// one standalone file a kind, named as kubeconform's
// {{.ResourceKind}}{{.KindSuffix}}.json template expects. Its test renders
// the chart in deploy/helm/plexus with helm and validates it with
// kubeconform (R-TEAM-4; docs/team.md, "The chart in CI").
package helmchart

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// swagger is the part of an OpenAPI v2 document that holds the types.
type swagger struct {
	Definitions map[string]map[string]any `json:"definitions"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

const refPrefix = "#/definitions/"

// WriteSchemas reads the OpenAPI v2 document at spec and writes into dir a
// schema for each kind it defines (every definition with
// x-kubernetes-group-version-kind), strict as kubeconform -strict wants:
// an object's unknown keys are refused. It returns how many it wrote.
func WriteSchemas(spec, dir string) (int, error) {
	b, err := os.ReadFile(spec)
	if err != nil {
		return 0, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	var doc swagger
	if err := json.Unmarshal(b, &doc); err != nil {
		return 0, fmt.Errorf("decoding %s: %w", spec, err)
	}
	if len(doc.Definitions) == 0 {
		return 0, fmt.Errorf("%s has no definitions", spec)
	}
	for name, def := range doc.Definitions {
		doc.Definitions[name] = strict(name, def)
	}
	n := 0
	for name, def := range doc.Definitions {
		kinds, err := kindsOf(def)
		if err != nil {
			return n, fmt.Errorf("%s: %w", name, err)
		}
		for _, k := range kinds {
			out := map[string]any{"definitions": reachable(doc.Definitions, name)}
			for key, v := range def {
				out[key] = v
			}
			b, err := json.Marshal(out)
			if err != nil {
				return n, fmt.Errorf("%s: %w", name, err)
			}
			if err := os.WriteFile(filepath.Join(dir, fileName(k)), b, 0o644); err != nil {
				return n, fmt.Errorf("writing the schema of %s: %w", k.Kind, err)
			}
			n++
		}
	}
	return n, nil
}

// fileName is kubeconform's name for a kind's schema: the kind in lower
// case, then the group's first label (none for the core group) and the
// version.
func fileName(k gvk) string {
	suffix := "-" + k.Version
	if k.Group != "" {
		suffix = "-" + strings.Split(k.Group, ".")[0] + suffix
	}
	return strings.ToLower(k.Kind+suffix) + ".json"
}

func kindsOf(def map[string]any) ([]gvk, error) {
	raw, ok := def["x-kubernetes-group-version-kind"]
	if !ok {
		return nil, nil
	}
	b, _ := json.Marshal(raw)
	var ks []gvk
	if err := json.Unmarshal(b, &ks); err != nil {
		return nil, fmt.Errorf("x-kubernetes-group-version-kind: %w", err)
	}
	return ks, nil
}

// strict rewrites one definition for validation: an object with
// properties takes no other keys, and what the API server reads as an
// integer or a string (IntOrString, Quantity) takes either.
func strict(name string, def map[string]any) map[string]any {
	if def["format"] == "int-or-string" || strings.HasSuffix(name, ".api.resource.Quantity") {
		return map[string]any{"description": def["description"],
			"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	}
	closeObjects(def)
	return def
}

// closeObjects sets additionalProperties false on every object schema
// with properties, under def: its properties, items, additional
// properties and alternatives.
func closeObjects(def map[string]any) {
	if props, ok := def["properties"].(map[string]any); ok {
		if _, set := def["additionalProperties"]; !set {
			def["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				closeObjects(m)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if m, ok := def[key].(map[string]any); ok {
			closeObjects(m)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if alts, ok := def[key].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					closeObjects(m)
				}
			}
		}
	}
}

// reachable is the definitions that name's refers to, directly or not.
func reachable(defs map[string]map[string]any, name string) map[string]any {
	out := map[string]any{}
	var visit func(v any)
	visit = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, refPrefix) {
				n := strings.TrimPrefix(ref, refPrefix)
				if _, seen := out[n]; !seen && defs[n] != nil {
					out[n] = defs[n]
					visit(defs[n])
				}
			}
			for _, c := range v {
				visit(c)
			}
		case []any:
			for _, c := range v {
				visit(c)
			}
		}
	}
	visit(defs[name])
	return out
}
