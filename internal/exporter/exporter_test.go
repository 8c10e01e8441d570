package exporter

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/importer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(s *Snippet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# path\n%s\n# format\n%s\n# command\n%s\n# notes\n", s.Path, s.Format, s.Command)
	for _, n := range s.Notes {
		b.WriteString(n + "\n")
	}
	b.WriteString("# text\n" + s.Text)
	return b.String()
}

func TestExportGolden(t *testing.T) {
	for _, client := range Clients() {
		t.Run(client, func(t *testing.T) {
			s, err := Export(client, Options{GOOS: "linux"})
			if err != nil {
				t.Fatal(err)
			}
			got := golden(s)
			path := filepath.Join("testdata", client+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("snippet differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// TestExportReadsBack checks that every snippet is valid in its format and
// that the importer, reading it as that client's file, finds exactly the
// server `plexus mcp` — with an awkward full path too.
func TestExportReadsBack(t *testing.T) {
	for _, command := range []string{"", `/opt/My "Tools"/plexus`} {
		for _, client := range Clients() {
			s, err := Export(client, Options{Command: command, GOOS: "darwin"})
			if err != nil {
				t.Fatal(err)
			}
			var v any
			switch s.Format {
			case "json":
				err = json.Unmarshal([]byte(s.Text), &v)
			case "toml":
				_, err = toml.Decode(s.Text, &v)
			case "yaml":
				err = yaml.Unmarshal([]byte(s.Text), &v)
			}
			if err != nil {
				t.Fatalf("%s: the snippet is not valid %s: %v\n%s", client, s.Format, err, s.Text)
			}
			res, err := importer.ParseIn(client, []byte(s.Text), "", nil)
			if err != nil {
				t.Fatalf("%s: %v", client, err)
			}
			want := command
			if want == "" {
				want = "plexus"
			}
			got, ok := res.Servers["plexus"]
			if len(res.Servers) != 1 || !ok || got.Type != config.TypeStdio || got.Command != want ||
				len(got.Args) != 1 || got.Args[0] != "mcp" || len(got.Env) != 0 {
				t.Errorf("%s: imported back as %+v", client, res.Servers)
			}
			for _, e := range res.Entries {
				if len(e.Notes) > 0 {
					t.Errorf("%s: the importer has notes on the snippet: %v", client, e.Notes)
				}
			}
		}
	}
}

func TestExportUnknownClient(t *testing.T) {
	if _, err := Export("emacs", Options{}); err == nil || !strings.Contains(err.Error(), "unknown client \"emacs\"") {
		t.Fatalf("err = %v", err)
	}
}

func TestExportPaths(t *testing.T) {
	for _, tc := range []struct{ client, goos, want string }{
		{ClaudeDesktop, "linux", "~/.config/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "darwin", "~/Library/Application Support/Claude/claude_desktop_config.json"},
		{Zed, "darwin", "~/.config/zed/settings.json"},
		{Codex, "linux", "~/.codex/config.toml"},
	} {
		s, _ := Export(tc.client, Options{GOOS: tc.goos})
		if s.Path != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.client, tc.goos, s.Path, tc.want)
		}
	}
}
