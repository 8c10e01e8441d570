package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/pgstore"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestStoreMigrate: `plexus store migrate` moves a home into a database
// and back: the settings, their kept revisions, the secrets, the OAuth
// tokens and the pins come back byte for byte; the secrets and tokens are
// sealed in the database; a target that holds settings is refused unless
// --force; and a daemon on the database serves what the home had.
func TestStoreMigrate(t *testing.T) {
	t.Parallel()
	pg := testenv.StartPostgres(t)
	keyFile, key := writeKeyFile(t)
	const secretCanary, tokenCanary, refreshCanary = "CANARY-migrate-secret-0c4d", "CANARY-migrate-access-7e21", "CANARY-migrate-refresh-93ab"

	// A home as a one-machine daemon leaves it.
	src := testenv.New(t)
	src.StartDaemon()
	if r := src.Run(secretCanary+"\n", "secret", "set", "EX_TOKEN"); r.Code != 0 {
		t.Fatal(r)
	}
	src.MustRun("add", "example", "--", src.Bin, "example-server")
	src.MustRun("settings", "set", "retryMs", "4321")
	src.StopDaemon()
	oauthJSON := `{
  "version": 1,
  "entries": {
    "https://as.example https://mcp.example/mcp": {
      "server": "example",
      "issuer": "https://as.example",
      "resource": "https://mcp.example/mcp",
      "authUrl": "https://as.example/authorize",
      "tokenUrl": "https://as.example/token",
      "client": {"id": "plexus-client", "kind": "dynamic"},
      "token": {"access": "` + tokenCanary + `", "refresh": "` + refreshCanary + `", "type": "Bearer"}
    }
  }
}
`
	if err := os.WriteFile(filepath.Join(src.Home, "oauth.json"), []byte(oauthJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	docs := []string{"extensions.json", "creds.json", "oauth.json", "pins.json"}
	for _, d := range docs {
		if _, err := os.Stat(filepath.Join(src.Home, d)); err != nil {
			t.Fatalf("the source home has no %s: %v", d, err)
		}
	}
	revisions := func(home string) map[string][]byte {
		out := map[string][]byte{}
		entries, _ := os.ReadDir(filepath.Join(home, "revisions"))
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(home, "revisions", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = data
		}
		return out
	}
	srcRevs := revisions(src.Home)
	if len(srcRevs) == 0 {
		t.Fatal("the source home kept no revision")
	}

	url := pg.Database("migrated")
	migrate := func(args ...string) testenv.Result {
		return src.Run("", append([]string{"store", "migrate", "--store-key-file", keyFile}, args...)...)
	}
	if r := migrate("--from", src.Home, "--to", url); r.Code != 0 {
		t.Fatalf("home → database: %+v", r)
	}
	dump := pg.Dump(url)
	for _, c := range []string{secretCanary, tokenCanary, refreshCanary} {
		if bytes.Contains(dump, []byte(c)) {
			t.Fatalf("the database dump holds %s in plaintext", c)
		}
	}
	for _, d := range docs {
		if !bytes.Contains(dump, []byte(d)) {
			t.Fatalf("the database holds no %s", d)
		}
	}
	// Again: the database holds settings now.
	if r := migrate("--from", src.Home, "--to", url); r.Code == 0 || !strings.Contains(r.Stderr, "--force") {
		t.Fatalf("a second copy over a full database: %+v", r)
	}
	// Without the key nothing opens.
	if r := src.Run("", "store", "migrate", "--from", url, "--to", filepath.Join(t.TempDir(), "h")); r.Code == 0 || !strings.Contains(r.Stderr, "--store-key-file") {
		t.Fatalf("a copy without the key: %+v", r)
	}

	// And back, to a fresh home: the same bytes.
	back := filepath.Join(t.TempDir(), "back")
	if r := migrate("--from", url, "--to", back); r.Code != 0 {
		t.Fatalf("database → home: %+v", r)
	}
	for _, d := range docs {
		a, _ := os.ReadFile(filepath.Join(src.Home, d))
		b, err := os.ReadFile(filepath.Join(back, d))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s did not come back as it was (%v):\n%s\n---\n%s", d, err, a, b)
		}
		if fi, err := os.Stat(filepath.Join(back, d)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s came back with mode %v (%v)", d, fi.Mode(), err)
		}
	}
	// The kept revisions: the same contents (the database keeps their
	// times to the microsecond).
	var want, got [][]byte
	for _, v := range srcRevs {
		want = append(want, v)
	}
	for _, v := range revisions(back) {
		got = append(got, v)
	}
	slices.SortFunc(want, bytes.Compare)
	slices.SortFunc(got, bytes.Compare)
	if !slices.EqualFunc(want, got, bytes.Equal) {
		t.Fatalf("the revisions did not come back: %d kept, %d back", len(want), len(got))
	}

	// A replica on the database serves what the home had.
	r := testenv.New(t)
	r.DaemonArgs = []string{"--store", url, "--store-key-file", keyFile}
	r.StartDaemon()
	waitState(t, r, "example", "ready", 10*time.Second)
	if out := r.MustRun("secret", "ls"); !strings.Contains(out, "EX_TOKEN") {
		t.Fatalf("the replica does not know the secret:\n%s", out)
	}
	if out := r.MustRun("settings", "get", "retryMs"); strings.TrimSpace(out) != "4321" {
		t.Fatalf("retryMs on the replica = %q", out)
	}
	// The tokens are in the database, sealed, and open under the key; the
	// replica shows none of the secrets in its status or its log.
	db, err := pgstore.Open(t.Context(), url, pgstore.Keys{Current: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if d, err := db.Read("oauth.json"); err != nil || !strings.Contains(string(d.Data), tokenCanary) {
		t.Fatalf("oauth.json in the database: %v", err)
	}
	seen := r.MustRun("status", "--json") + r.MustRun("ls", "--json") + r.DaemonOutput()
	logs, err := os.ReadFile(filepath.Join(r.Home, "logs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen += string(logs)
	for _, c := range []string{secretCanary, tokenCanary, refreshCanary} {
		if strings.Contains(seen, c) {
			t.Fatalf("the replica shows %s", c)
		}
	}
}
