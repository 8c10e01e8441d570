package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamBootstrap: replicas started together on an empty database with
// --store-bootstrap (the chart's settings from its values) start on those
// settings, written once; a replica started later with other settings
// keeps the database's; and settings that do not validate stop the
// replica with the problem named. Before, the settings had to be in the
// database before the first replica started.
func TestTeamBootstrap(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := write("first.json", `{"mcp": {"retryMs": 4242}}`)
	other := write("other.json", `{"mcp": {"retryMs": 1111}}`)
	bad := write("bad.json", `{"mcp": {"retryMs": "soon"}}`)
	envs := make([]*testenv.Env, 2)
	var wg sync.WaitGroup
	for i := range envs {
		envs[i] = testenv.New(t)
		envs[i].DaemonArgs = []string{"--store", pg.URL, "--store-key-file", keyFile, "--store-bootstrap", first}
		wg.Go(envs[i].StartDaemon)
	}
	wg.Wait()
	_, rev0 := retryMs(t, envs[0])
	for i, e := range envs {
		if v, rev := retryMs(t, e); v != 4242 || rev != rev0 {
			t.Fatalf("replica %d: retryMs %d at revision %d, want 4242 at %d", i, v, rev, rev0)
		}
	}
	later := testenv.New(t)
	later.DaemonArgs = []string{"--store", pg.URL, "--store-key-file", keyFile, "--store-bootstrap", other}
	later.StartDaemon()
	if v, _ := retryMs(t, later); v != 4242 {
		t.Fatalf("a replica started later with other settings: retryMs %d, want the database's 4242", v)
	}
	empty := pg.Database("empty")
	r := testenv.New(t).Run("", "daemon", "--listen", "off", "--store", empty, "--store-key-file", keyFile, "--store-bootstrap", bad)
	if r.Code == 0 || !strings.Contains(r.Stderr, "--store-bootstrap") || !strings.Contains(r.Stderr, "retryMs") {
		t.Fatalf("settings that do not validate: exit %d\n%s", r.Code, r.Stderr)
	}
}
