package pgstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

func newKey(t *testing.T) []byte {
	k := make([]byte, pgstore.KeySize)
	rand.Read(k)
	return k
}

func open(t *testing.T, url string, keys pgstore.Keys) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestWritesAreConditional: a write names the generation it read; one
// based on an older generation is refused with the current version, and
// nothing changes.
func TestWritesAreConditional(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keys := pgstore.Keys{Current: newKey(t)}
	a, b := open(t, pg.URL, keys), open(t, pg.URL, keys) // two replicas
	d0, err := a.Read("x.json")
	if err != nil || d0.Exists {
		t.Fatalf("fresh read = %+v, %v", d0, err)
	}
	d1, err := a.Write("x.json", d0, []byte("one"), true)
	if err != nil || d1.Gen != 1 {
		t.Fatalf("first write = %+v, %v", d1, err)
	}
	// b read nothing: its create is stale.
	var stale *docstore.StaleError
	if _, err := b.Write("x.json", d0, []byte("other"), true); !errors.As(err, &stale) || string(stale.Current.Data) != "one" || stale.Current.Gen != 1 {
		t.Fatalf("stale create = %v (%+v)", err, stale)
	}
	d2, err := b.Write("x.json", stale.Current, []byte("two"), true)
	if err != nil || d2.Gen != 2 {
		t.Fatalf("write on the current generation = %+v, %v", d2, err)
	}
	if _, err := a.Write("x.json", d1, []byte("lost"), true); !errors.As(err, &stale) || string(stale.Current.Data) != "two" {
		t.Fatalf("stale update = %v", err)
	}
	if got, _ := a.Read("x.json"); string(got.Data) != "two" || got.Gen != 2 {
		t.Fatalf("after a refused write: %+v", got)
	}
	revs, err := a.Revisions("x.json")
	if err != nil || len(revs) != 1 {
		t.Fatalf("revisions = %v, %v", revs, err)
	}
	if data, err := b.RevisionData("x.json", revs[0].Name); err != nil || string(data) != "one" {
		t.Fatalf("revision data = %q, %v", data, err)
	}
	if _, err := b.RevisionData("x.json", "x.json.nope"); err == nil {
		t.Fatal("an unknown revision was found")
	}
	// The schema is migrated once: opening again changes nothing, and a
	// database of a newer plexus is refused.
	c := open(t, pg.URL, keys)
	if got, _ := c.Read("x.json"); string(got.Data) != "two" {
		t.Fatalf("after a second open: %+v", got)
	}
	conn, err := pgx.Connect(context.Background(), pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(context.Background(), `SELECT version FROM plexus_schema`).Scan(&v); err != nil || v != pgstore.SchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", v, err, pgstore.SchemaVersion)
	}
	if _, err := conn.Exec(context.Background(), `UPDATE plexus_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Open(context.Background(), pg.URL, keys, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("open of a newer schema: %v", err)
	}
}

// TestConcurrentCreates: replicas that start together each try to
// create the same document; exactly one create lands.
func TestConcurrentCreates(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keys := pgstore.Keys{Current: newKey(t)}
	s := open(t, pg.URL, keys)
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := 0
	for range 8 {
		wg.Go(func() {
			if _, err := s.Write("c.json", docstore.Doc{}, []byte("x"), false); err == nil {
				mu.Lock()
				landed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if landed != 1 {
		t.Fatalf("%d creates landed, want 1", landed)
	}
}

// TestSealedAtRest: the database holds no plaintext, a value does not
// open under another key nor in another row, and a rotation re-seals
// everything under the new key at open.
func TestSealedAtRest(t *testing.T) {
	pg := testenv.StartPostgres(t)
	oldKey, newK := newKey(t), newKey(t)
	s := open(t, pg.URL, pgstore.Keys{Current: oldKey})
	const canary = "CANARY-sealed-9f3a1c"
	d, _ := s.Write("creds.json", docstore.Doc{}, []byte(`{"env":{"T":"`+canary+`"}}`), true)
	if _, err := s.Write("creds.json", d, []byte(`{"env":{"T":"`+canary+`-2"}}`), true); err != nil {
		t.Fatal(err)
	}
	if dump := pg.Dump(pg.URL); bytes.Contains(dump, []byte(canary)) || !bytes.Contains(dump, []byte("creds.json")) {
		t.Fatalf("the dump holds the canary (or no row at all):\n%s", dump)
	}
	// Without the old key nothing opens, and the error says what to do.
	if _, err := pgstore.Open(context.Background(), pg.URL, pgstore.Keys{Current: newK}, nil); err == nil || !strings.Contains(err.Error(), "--store-old-key-file") {
		t.Fatalf("open under an unknown key: %v", err)
	}
	// The rotation: new key, old one to read.
	r := open(t, pg.URL, pgstore.Keys{Current: newK, Old: [][]byte{oldKey}})
	if got, err := r.Read("creds.json"); err != nil || !strings.Contains(string(got.Data), canary+"-2") {
		t.Fatalf("read after rotation = %q, %v", got.Data, err)
	}
	// Everything, the revisions too, is now under the new key alone.
	n := open(t, pg.URL, pgstore.Keys{Current: newK})
	revs, _ := n.Revisions("creds.json")
	if len(revs) != 1 {
		t.Fatalf("revisions = %v", revs)
	}
	if data, err := n.RevisionData("creds.json", revs[0].Name); err != nil || !strings.Contains(string(data), canary) {
		t.Fatalf("old revision after rotation = %q, %v", data, err)
	}
	if bytes.Contains(pg.Dump(pg.URL), []byte(canary)) {
		t.Fatal("the dump holds the canary after rotation")
	}
}

// TestFollow: a write through one store is announced to another's Follow,
// and a Follow whose connection was lost reconnects and says to read
// everything again.
func TestFollow(t *testing.T) {
	pg := testenv.StartPostgres(t)
	keys := pgstore.Keys{Current: newKey(t)}
	a, b := open(t, pg.URL, keys), open(t, pg.URL, keys)
	got := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Follow(ctx, func(name string) { got <- name }) }()
	defer func() { cancel(); <-done }()
	expect := func(want string, within time.Duration) {
		t.Helper()
		deadline := time.After(within)
		for {
			select {
			case name := <-got:
				if name == want {
					return
				}
			case <-deadline:
				t.Fatalf("no notice %q within %s", want, within)
			}
		}
	}
	expect("", 5*time.Second) // connected
	start := time.Now()
	if _, err := a.Write("n.json", docstore.Doc{}, []byte("1"), false); err != nil {
		t.Fatal(err)
	}
	expect("n.json", time.Second)
	t.Logf("notice after %s", time.Since(start))
	pg.Stop()
	pg.Start()
	expect("", 10*time.Second) // reconnected: read everything again
}

// TestPing: a replica's readiness follows the database: Ping fails while
// it is stopped, and succeeds again once it is back (the pool reconnects).
func TestPing(t *testing.T) {
	pg := testenv.StartPostgres(t)
	s := open(t, pg.URL, pgstore.Keys{Current: newKey(t)})
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return s.Ping(ctx)
	}
	if err := ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	pg.Stop()
	if err := ping(); err == nil {
		t.Fatal("Ping with the database stopped: nil")
	}
	pg.Start()
	if err := ping(); err != nil {
		t.Fatalf("Ping after the database came back: %v", err)
	}
}
