package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImportConnectMoveDisconnect: for every client connect knows, on a
// daemon of its own: import the client's file (clientconf's fixture, with
// canary secrets), connect with --yes — which takes the client's entries
// Plexus now serves out of the file, leaving no secret of theirs inline —
// then disconnect, which gives the file back byte for byte.
func TestImportConnectMoveDisconnect(t *testing.T) {
	t.Parallel()
	for client, rel := range clientFiles {
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			before, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "clientconf", "testdata", client+".before"))
			if err != nil {
				t.Fatal(err)
			}
			e := testenv.New(t)
			h := newClientHome(t, e)
			// The fixtures' servers (npx, uvx, docker…) are not to run:
			// only their entries matter here. Their remote ones cannot be
			// reached, and a daemon stopping waits on a connection being
			// made: the daemon is killed at the end instead.
			bin := t.TempDir()
			for _, c := range []string{"npx", "uvx", "docker", "node", "python3"} {
				if err := os.WriteFile(filepath.Join(bin, c), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			e.ExtraEnv = append(e.ExtraEnv, "PATH="+bin)
			path := filepath.Join(h.dir, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, before, 0o600); err != nil {
				t.Fatal(err)
			}
			e.StartDaemon()
			if r := e.Run("", "import", path, "--dialect", client); r.Code != 0 {
				t.Fatalf("import: %+v", r)
			}
			r := e.Run("", "connect", client, "--yes", "--json")
			if r.Code != 0 {
				t.Fatalf("connect: %+v", r)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Contains(after, []byte(e.Bin)) {
				t.Fatalf("no Plexus entry after connect:\n%s", after)
			}
			moved := strings.Contains(r.Stdout, `"moved"`)
			if moved {
				if m := mcpCanary(after, client); m != "" {
					t.Errorf("a secret of a moved entry is still inline: %s\n%s", m, after)
				}
				if fi, err := os.Stat(path + ".plexus-moved"); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("the record of the move: %v", err)
				}
			} else if client != "windsurf" {
				t.Errorf("connect --yes moved nothing out of %s's file: %s\n%s", client, r.Stdout, after)
			}
			if r := e.Run("", "disconnect", client); r.Code != 0 {
				t.Fatalf("disconnect: %+v", r)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
				t.Errorf("after disconnect:\n%s\nwant:\n%s", got, before)
			}
			if _, err := os.Stat(path + ".plexus-moved"); !os.IsNotExist(err) {
				t.Errorf("the record of the move outlived the disconnect: %v", err)
			}
			e.KillDaemon()
		})
	}
}

// mcpCanary returns a canary secret found in a moved-out file's server
// entries: the fixtures plant CANARY values in env and headers. Canaries
// of settings that are not servers' (an API key of the editor) stay.
func mcpCanary(file []byte, client string) string {
	for _, line := range strings.Split(string(file), "\n") {
		if strings.Contains(line, "CANARY") && !strings.Contains(line, "apiKey") && !strings.Contains(line, "api_key") && !strings.Contains(line, "GOOSE_") && !strings.Contains(line, "theme") {
			return line
		}
	}
	return ""
}
