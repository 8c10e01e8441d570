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

// TestReplicaReadyWithoutTheDatabase: a replica on a database store is
// ready once its servers settled, and stays ready and alive while the
// database is stopped: it serves what runs without it, and an outage
// that made every replica unready would take the whole face out of a
// Kubernetes Service (before, it went unready within a probe).
func TestReplicaReadyWithoutTheDatabase(t *testing.T) {
	t.Parallel()
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
	for range 3 {
		time.Sleep(time.Second)
		if code, body := probe(addr, "/readyz"); code != 200 || body != "ok\n" {
			t.Errorf("readyz without the database: %d %q, want 200 ok", code, body)
		}
	}
	if code, _ := probe(addr, "/healthz"); code != 200 {
		t.Errorf("healthz without the database: %d, want 200 (alive: a restart would not help)", code)
	}
	if _, err := client.New(e.Home).Status(context.Background()); err != nil {
		t.Errorf("status without the database: %v", err)
	}

	pg.Start()
	within(t, 10*time.Second, "ready with the database back", is("/readyz", 200))
}
