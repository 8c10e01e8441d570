package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestTeamBootstrap: replicas started together on an empty database with
// --store-bootstrap (the chart's settings from its values) start on those
// settings, written once; a replica started later with other settings
// keeps the database's; and settings that do not validate stop the
// replica with the problem named. (And --metrics-listen serves /metrics
// alone, without a token.) Before, the settings had to be in the
// database before the first replica started.
func TestTeamBootstrap(t *testing.T) {
	t.Parallel()
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
	metricsAddr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	later.DaemonArgs = []string{"--store", pg.URL, "--store-key-file", keyFile, "--store-bootstrap", other, "--metrics-listen", metricsAddr}
	later.StartDaemon()
	if v, _ := retryMs(t, later); v != 4242 {
		t.Fatalf("a replica started later with other settings: retryMs %d, want the database's 4242", v)
	}
	// --metrics-listen: /metrics alone, without a token, for a scraper.
	if code, body := probe(metricsAddr, "/metrics"); code != 200 || !strings.Contains(body, "plexus_") {
		t.Fatalf("GET /metrics on --metrics-listen: %d %.200s", code, body)
	}
	for _, path := range []string{"/v1/status", "/mcp", "/"} {
		if code, _ := probe(metricsAddr, path); code != 404 && code != 405 {
			t.Errorf("GET %s on --metrics-listen: %d, want 404", path, code)
		}
	}
	empty := pg.Database("empty")
	r := testenv.New(t).Run("", "daemon", "--listen", "off", "--store", empty, "--store-key-file", keyFile, "--store-bootstrap", bad)
	if r.Code == 0 || !strings.Contains(r.Stderr, "--store-bootstrap") || !strings.Contains(r.Stderr, "retryMs") {
		t.Fatalf("settings that do not validate: exit %d\n%s", r.Code, r.Stderr)
	}
}
