package cli

import (
	"testing"
)

// TestNoSandboxOptsOut: edit --no-sandbox writes "sandbox": false for a
// stdio server, the setting that opts it out of every sandbox — a team
// replica's default one too, which a server without the key gets — and
// leaves a URL server without the key; it takes no --sandbox or --allow-*.
func TestNoSandboxOptsOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want any
	}{
		{"a sandboxed stdio server", map[string]any{keyType: typeStdio, "sandbox": map[string]any{"network": "none"}}, false},
		{"a stdio server without the key", map[string]any{keyType: typeStdio}, false},
		{"a URL server", map[string]any{keyType: "http", "sandbox": nil}, nil},
	} {
		f := sandboxFlags{off: true}
		if err := f.applyTo(tc.cfg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, has := tc.cfg["sandbox"]
		if tc.want == nil && has || tc.want != nil && got != tc.want {
			t.Errorf("%s: sandbox %v (set: %v), want %v", tc.name, got, has, tc.want)
		}
	}
	f := sandboxFlags{off: true, read: []string{"/tmp"}}
	if err := f.applyTo(map[string]any{keyType: typeStdio}); err == nil {
		t.Error("--no-sandbox with --allow-read was taken")
	}
}
