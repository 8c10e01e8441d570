package helmchart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSchemas: one file a kind, named as kubeconform looks for it,
// standalone (the definitions it refers to, and no others), objects
// closed to unknown keys, int-or-string taking either.
func TestWriteSchemas(t *testing.T) {
	spec := `{"definitions": {
	  "io.k8s.api.apps.v1.Deployment": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Deployment"}],
	    "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"}}},
	  "io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "properties": {
	    "maxSurge": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
	    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
	    "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
	  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
	  "io.k8s.api.core.v1.Service": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Service"}],
	    "properties": {"port": {"type": "integer"}}},
	  "io.k8s.api.networking.v1.Ingress": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "networking.k8s.io", "version": "v1", "kind": "Ingress"}]},
	  "io.k8s.api.core.v1.Unused": {"type": "object"}
	}}`
	src := filepath.Join(t.TempDir(), "swagger.json")
	if err := os.WriteFile(src, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n, err := WriteSchemas(src, dir)
	if err != nil || n != 3 {
		t.Fatalf("WriteSchemas = %d, %v; want 3 kinds", n, err)
	}
	read := func(name string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	read("service-v1.json")
	read("ingress-networking-v1.json")
	d := read("deployment-apps-v1.json")
	if d["additionalProperties"] != false {
		t.Errorf("the kind is not closed: %v", d["additionalProperties"])
	}
	defs := d["definitions"].(map[string]any)
	if len(defs) != 2 || defs["io.k8s.api.core.v1.Unused"] != nil {
		t.Errorf("definitions %v, want the spec and IntOrString only", keys(defs))
	}
	spc := defs["io.k8s.api.apps.v1.DeploymentSpec"].(map[string]any)
	props := spc["properties"].(map[string]any)
	if spc["additionalProperties"] != false {
		t.Error("a referred object is not closed")
	}
	if labels := props["labels"].(map[string]any); labels["additionalProperties"] == false {
		t.Error("a map's additionalProperties was overwritten")
	}
	if item := props["items"].(map[string]any)["items"].(map[string]any); item["additionalProperties"] != false {
		t.Error("an array's item object is not closed")
	}
	ios := defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].(map[string]any)
	if alts, _ := ios["anyOf"].([]any); len(alts) != 2 {
		t.Errorf("IntOrString = %v, want a string or a number", ios)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestWriteSchemasRefusesWhatIsNotADocument: an unreadable or empty
// document is an error, not zero schemas.
func TestWriteSchemasRefusesWhatIsNotADocument(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"empty.json": `{}`, "garbage.json": `not json`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := WriteSchemas(p, t.TempDir()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := WriteSchemas(filepath.Join(dir, "missing.json"), dir); err == nil {
		t.Error("a missing document: no error")
	}
}
