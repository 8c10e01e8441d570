package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/client"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// writeKeyFile writes a fresh store key file and returns its path and key.
func writeKeyFile(t *testing.T) (string, []byte) {
	t.Helper()
	key := make([]byte, pgstore.KeySize)
	rand.Read(key)
	path := filepath.Join(t.TempDir(), "store.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, key
}

// replicas starts n daemons, each with a home of its own, on one database.
func replicas(t *testing.T, n int, url, keyFile string) []*testenv.Env {
	t.Helper()
	var out []*testenv.Env
	for range n {
		e := testenv.New(t)
		e.DaemonArgs = []string{"--store", url, "--store-key-file", keyFile}
		e.StartDaemon()
		out = append(out, e)
	}
	return out
}

// within polls ok every 5 ms until it holds, and returns how long it took;
// the test fails past d.
func within(t *testing.T, d time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func retryMs(t *testing.T, e *testenv.Env) (int, int64) {
	s, err := client.New(e.Home).Settings(context.Background())
	if err != nil {
		return -1, -1
	}
	return s.RetryMs, s.Revision
}

// TestTeamReplicas: three daemons on one PostgreSQL database behave as one:
// a change through any replica is applied by the others within 1 s;
// concurrent writers across them are all-or-nothing with revisions that
// have no gap; the secrets are sealed in the database and appear in no
// log or status; and the database going away under load stops no call,
// the replicas catching up once it is back.
func TestTeamReplicas(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	rs := replicas(t, 3, pg.URL, keyFile)
	a, b, c := rs[0], rs[1], rs[2]
	ctx := context.Background()

	t.Run("a change through one replica is applied by the others within 1 s", func(t *testing.T) {
		for i, via := range rs {
			want := 1000 + i
			if _, err := client.New(via.Home).SetSettings(ctx, apitype.Settings{RetryMs: want}, 0); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for _, other := range rs {
				within(t, time.Second, "retryMs applied", func() bool { v, _ := retryMs(t, other); return v == want })
			}
			t.Logf("a change through replica %d was applied by all three in %s", i, time.Since(start))
		}
		// A server added through A runs on B and C, under the same name.
		// (Its start is the owner's, under the race detector beside the
		// other team tests: 4.4 s at load 20, over 10 s once at load 38.)
		a.MustRun("add", "example", "--", a.Bin, "example-server")
		for _, e := range []*testenv.Env{b, c} {
			d := within(t, 25*time.Second, "the server added through A running", func() bool {
				s, ok := servers(t, e)["example"]
				return ok && s.State == "ready"
			})
			t.Logf("the server added through A runs on another replica after %s", d)
		}
		echo := toolNamed(t, tools(t, a), "example", "echo")
		for _, e := range rs {
			if out := e.MustRun("call", echo.Name, `{"text":"hi"}`); strings.TrimSpace(out) != "hi" {
				t.Fatalf("call through %s: %q", e.Home, out)
			}
		}
	})

	t.Run("every replica's records reach the database, chained against forgery and erasure", func(t *testing.T) {
		// The call through each replica above is a record in the one
		// table, each replica's chain verifying under the team's key.
		var recs *apitype.AuditRecords
		within(t, 10*time.Second, "three replicas' calls in the team's audit log", func() bool {
			var err error
			recs, err = client.New(b.Home).Audit(ctx, url.Values{"team": {"1"}, "kind": {"tools/call"}, "server": {"example"}})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range recs.Records {
				seen[r.Replica] = r.MAC != "" && r.Seq > 0
			}
			return len(seen) == 3 && !slices.Contains(slices.Collect(maps.Values(seen)), false)
		})
		if len(recs.Problems) != 0 {
			t.Fatalf("the genuine records do not verify: %v", recs.Problems)
		}
		// A writer of the database, without the store's key: it alters a
		// record, erases one, forges one. Each is found.
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		// Each replica writes one more record, so that the victim is not
		// the newest of its chain (whose erasure only the replica's own
		// file would show).
		victim := recs.Records[0]
		echo := toolNamed(t, tools(t, a), "example", "echo")
		for _, e := range rs {
			e.MustRun("call", echo.Name, `{"text":"again"}`)
		}
		within(t, 10*time.Second, "a later record of the victim's replica", func() bool {
			out, err := client.New(b.Home).Audit(ctx, url.Values{"team": {"1"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Records {
				if r.Replica == victim.Replica && r.Seq > victim.Seq {
					return true
				}
			}
			return false
		})
		problems := func() []string {
			t.Helper()
			out, err := client.New(c.Home).Audit(ctx, url.Values{"team": {"1"}})
			if err != nil {
				t.Fatal(err)
			}
			return out.Problems
		}
		if tag, err := conn.Exec(ctx, `UPDATE plexus_audit SET record = convert_to(replace(convert_from(record, 'UTF8'), '"outcome":"ok"', '"outcome":"denied"'), 'UTF8') WHERE replica = $1 AND seq = $2`, victim.Replica, int64(victim.Seq)); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("altering the record: %v %v", tag, err)
		}
		if p := problems(); len(p) == 0 {
			t.Error("an altered record verified")
		}
		if _, err := conn.Exec(ctx, `DELETE FROM plexus_audit WHERE replica = $1 AND seq = $2`, victim.Replica, int64(victim.Seq)); err != nil {
			t.Fatal(err)
		}
		if p := problems(); len(p) == 0 {
			t.Error("an erased record went unnoticed")
		}
		if _, err := conn.Exec(ctx, `INSERT INTO plexus_audit (replica, seq, at, record) SELECT replica, $2, now(), record FROM plexus_audit WHERE replica = $1 ORDER BY seq DESC LIMIT 1`, victim.Replica, int64(1<<40)); err != nil {
			t.Fatal(err)
		}
		if p := problems(); len(p) < 2 {
			t.Errorf("a forged record went unnoticed: %v", p)
		}
	})

	t.Run("20 concurrent writers across the replicas", func(t *testing.T) {
		_, start := retryMs(t, a)
		var wg sync.WaitGroup
		var landed sync.Map // value → revision
		var conflicts atomic.Int64
		for i := range 20 {
			wg.Go(func() {
				// Read, then save based on what was read; a 409 means
				// another write landed first: read again and redo.
				cl := client.New(rs[i%3].Home)
				for try := 0; try < 500; try++ {
					cur, err := cl.Settings(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					got, err := cl.SetSettings(ctx, apitype.Settings{RetryMs: 5000 + i}, cur.Revision)
					var ae *client.APIError
					switch {
					case errors.As(err, &ae) && ae.Status == http.StatusConflict:
						conflicts.Add(1)
						continue
					case err != nil:
						t.Errorf("writer %d: %v", i, err)
					default:
						landed.Store(5000+i, got.Revision)
					}
					return
				}
				t.Errorf("writer %d never landed", i)
			})
		}
		wg.Wait()
		var n int64
		revs := map[int64]int{}
		landed.Range(func(k, v any) bool {
			n++
			revs[v.(int64)] = k.(int)
			return true
		})
		t.Logf("%d writes landed, %d tries refused with 409 on the way", n, conflicts.Load())
		if n != 20 || len(revs) != 20 {
			t.Fatalf("%d writes landed at %d distinct revisions, want 20", n, len(revs))
		}
		// Every replica ends at the same revision: one more per write landed.
		final := start + n
		for _, e := range rs {
			within(t, time.Second, "the last revision applied", func() bool { _, r := retryMs(t, e); return r == final })
		}
		// The history in the database: each landed write is one revision,
		// whole (its own value), with no gap and no duplicate (the 20
		// versions kept are exactly the ones these writes replaced).
		db, err := pgstore.Open(ctx, pg.URL, pgstore.Keys{Current: key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		byRev := map[int64]*config.File{}
		cur, err := db.Read("extensions.json")
		if err != nil {
			t.Fatal(err)
		}
		versions := [][]byte{cur.Data}
		kept, err := db.Revisions("extensions.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range kept {
			data, err := db.RevisionData("extensions.json", r.Name)
			if err != nil {
				t.Fatal(err)
			}
			versions = append(versions, data)
		}
		for _, data := range versions {
			f, err := config.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if byRev[f.Revision] != nil {
				t.Fatalf("revision %d is kept twice", f.Revision)
			}
			byRev[f.Revision] = f
		}
		for r := start + 1; r <= final; r++ {
			f := byRev[r]
			if f == nil {
				t.Fatalf("revision %d is missing from the history (%d versions kept)", r, len(byRev))
			}
			if want, ok := revs[r]; !ok || f.MCP.RetryMs != want {
				t.Fatalf("revision %d holds retryMs %d; the write that got it sent %d", r, f.MCP.RetryMs, want)
			}
		}
	})

	t.Run("a revision restored through one replica is applied by all", func(t *testing.T) {
		var list []apitype.Revision
		if err := json.Unmarshal([]byte(c.MustRun("revisions", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		if len(list) < 2 {
			t.Fatalf("%d revisions kept", len(list))
		}
		oldest := list[len(list)-1]
		db, err := pgstore.Open(ctx, pg.URL, pgstore.Keys{Current: key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		data, err := db.RevisionData("extensions.json", oldest.Name)
		if err != nil {
			t.Fatal(err)
		}
		was, err := config.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		_, before := retryMs(t, c)
		c.MustRun("revisions", "restore", oldest.Name)
		for _, e := range rs {
			within(t, time.Second, "the restored revision applied", func() bool {
				v, r := retryMs(t, e)
				return v == was.MCP.RetryMs && r == before+1
			})
		}
	})

	t.Run("secrets are sealed in the database and never shown", func(t *testing.T) {
		const canary = "CANARY-team-secret-5b1e77"
		if r := b.Run(canary+"\n", "secret", "set", "TEAM_TOKEN"); r.Code != 0 {
			t.Fatal(r)
		}
		for _, e := range []*testenv.Env{a, c} {
			within(t, time.Second, "the secret known to every replica", func() bool {
				l, err := client.New(e.Home).Secrets(ctx)
				return err == nil && slices.Contains(l.Names, "TEAM_TOKEN")
			})
		}
		if dump := pg.Dump(pg.URL); bytes.Contains(dump, []byte(canary)) || !bytes.Contains(dump, []byte("creds.json")) {
			t.Fatal("the database dump holds the secret in plaintext (or no secrets at all)")
		}
		for _, e := range rs {
			status := e.MustRun("status", "--json")
			logs, err := os.ReadFile(filepath.Join(e.Home, "logs.jsonl"))
			if err != nil || !bytes.Contains(logs, []byte("daemon ready")) {
				t.Fatalf("no log to read in %s: %v", e.Home, err)
			}
			for what, s := range map[string]string{"status": status, "log": string(logs), "output": e.DaemonOutput()} {
				if strings.Contains(s, canary) {
					t.Fatalf("the %s of %s shows the secret", what, e.Home)
				}
			}
		}
	})

	t.Run("the database restarts under load", func(t *testing.T) {
		echo := toolNamed(t, tools(t, a), "example", "echo")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var calls, reads, failed atomic.Int64
		var firstErr atomic.Value
		for _, e := range rs {
			cl := client.New(e.Home)
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := cl.Settings(ctx); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprint("settings: ", err))
					} else {
						reads.Add(1)
					}
					if _, err := cl.Call(ctx, apitype.CallRequest{Name: echo.Name, Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprint("call: ", err))
					} else {
						calls.Add(1)
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond)
		pg.Stop()
		down := time.Now()
		before := calls.Load()
		time.Sleep(time.Second)
		during := calls.Load() - before
		pg.Start()
		t.Logf("database down for %s: %d calls served meanwhile", time.Since(down), during)
		// A change right after the restart, before the others have their
		// change notices back: they must catch up all the same.
		var err error
		start := time.Now()
		for time.Since(start) < 10*time.Second {
			if _, err = client.New(a.Home).SetSettings(ctx, apitype.Settings{RetryMs: 7777}, 0); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("no save after the restart: %v", err)
		}
		for _, e := range rs {
			d := within(t, 5*time.Second, "the change after the restart applied", func() bool { v, _ := retryMs(t, e); return v == 7777 })
			t.Logf("%s caught up %s after the save", filepath.Base(filepath.Dir(e.Home)), d)
		}
		close(stop)
		wg.Wait()
		t.Logf("under load: %d calls and %d reads served, %d failed", calls.Load(), reads.Load(), failed.Load())
		if failed.Load() > 0 || during == 0 {
			t.Fatalf("%d calls or reads failed while the database was away (first: %v); %d calls served while it was down", failed.Load(), firstErr.Load(), during)
		}
	})
}

// TestTeamStoreBadInput: a daemon given a database store it cannot use
// does not start, says why, and quotes neither the key nor the password.
func TestTeamStoreBadInput(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	const password, keyText = "CANARY-pw-41d2", "CANARY-not-a-key-77"
	bad := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(bad, []byte(keyText), 0o600); err != nil {
		t.Fatal(err)
	}
	good, _ := writeKeyFile(t)
	closed := "postgres://plexus:" + password + "@127.0.0.1:1/plexus?connect_timeout=2"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", "mysql://db/x", "--store-key-file", good}, "postgres:// URL"},
		{[]string{"--store", closed}, "--store-key-file"},
		{[]string{"--store", closed, "--store-key-file", bad}, "not base64"},
		{[]string{"--store", closed, "--store-key-file", good}, "connecting to the store"},
		{[]string{"--store", "postgres://plexus:" + password + "@[::1", "--store-key-file", good}, "not a valid postgres:// URL"},
	} {
		r := e.Run("", append([]string{"daemon", "--listen", "off"}, tc.args...)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("daemon %v: exit %d, stderr does not say %q:\n%s", tc.args, r.Code, tc.want, r.Stderr)
		}
		if strings.Contains(r.Stderr+r.Stdout, password) || strings.Contains(r.Stderr+r.Stdout, keyText) {
			t.Errorf("daemon %v quotes the password or the key:\n%s", tc.args, r.Stderr)
		}
	}
}
