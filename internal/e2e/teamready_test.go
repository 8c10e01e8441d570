package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// probe is the status and body of GET addr+path.
func probe(addr, path string) (int, string) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReplicaReadinessFollowsTheDatabase: a replica on a database store
// is ready once its servers settled; while the database is stopped it is
// not ready (and says nothing more) but alive, and calls keep working;
// once the database is back it is ready again.
func TestReplicaReadinessFollowsTheDatabase(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keyFile, _ := writeKeyFile(t)
	e := replicas(t, 1, pg.URL, keyFile)[0]
	st, err := client.New(e.Home).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	addr := st.HTTPAddr
	is := func(path string, want int) func() bool {
		return func() bool { code, _ := probe(addr, path); return code == want }
	}
	within(t, 10*time.Second, "ready", is("/readyz", 200))

	pg.Stop()
	within(t, 5*time.Second, "not ready with the database stopped", is("/readyz", 503))
	if code, body := probe(addr, "/readyz"); body != "not ready\n" {
		t.Errorf("readyz without the database: %d %q, want only \"not ready\"", code, body)
	}
	if code, _ := probe(addr, "/healthz"); code != 200 {
		t.Errorf("healthz without the database: %d, want 200 (alive: a restart would not help)", code)
	}
	if _, err := client.New(e.Home).Status(context.Background()); err != nil {
		t.Errorf("status without the database: %v", err)
	}

	pg.Start()
	within(t, 10*time.Second, "ready again with the database back", is("/readyz", 200))
}
