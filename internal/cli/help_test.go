package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestHelpGolden keeps the help text reviewed: a change to it shows up as a
// diff of testdata. Run `go test ./internal/cli -run Help -update` to accept.
func TestHelpGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"help-root.golden", []string{"--help"}},
		{"help-add.golden", []string{"add", "--help"}},
		{"help-edit.golden", []string{"edit", "--help"}},
		{"help-logs.golden", []string{"logs", "--help"}},
		{"help-events.golden", []string{"events", "--help"}},
		{"help-status.golden", []string{"status", "--help"}},
		{"help-login.golden", []string{"login", "--help"}},
		{"help-import.golden", []string{"import", "--help"}},
		{"help-export.golden", []string{"export", "--help"}},
		{"help-accept.golden", []string{"accept", "--help"}},
		{"help-approve.golden", []string{"approve", "--help"}},
		{"help-ui.golden", []string{"ui", "--help"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if r.stdout != string(want) {
				t.Errorf("help differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, r.stdout, want)
			}
		})
	}
}
