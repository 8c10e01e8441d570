package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/creds"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// stdio returns a minimal valid stdio server.
func stdio(command string, args ...string) config.Server {
	return config.Server{Type: config.TypeStdio, Command: command, Args: args}
}

// withServer returns a copy of cfg with one more server.
func withServer(cfg *config.File, name string, sc config.Server) *config.File {
	next := cfg.Clone()
	if next.MCP.Servers == nil {
		next.MCP.Servers = map[string]config.Server{}
	}
	next.MCP.Servers[name] = sc
	return next
}

func open(t *testing.T, home string) *store.Store {
	t.Helper()
	s, err := store.Open(home)
	if err != nil {
		t.Fatalf("Open(%s): %v", home, err)
	}
	return s
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dirNames lists a directory, to catch temporary files left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// decodedOnDisk reads extensions.json back the way a restarted daemon would.
func decodedOnDisk(t *testing.T, home string) *config.File {
	t.Helper()
	f, err := config.Decode(readFile(t, filepath.Join(home, store.ConfigFile)))
	if err != nil {
		t.Fatalf("extensions.json on disk does not decode: %v", err)
	}
	return f
}

func TestOpenCreatesPrivateHomeAndEmptyCreds(t *testing.T) {
	home := filepath.Join(t.TempDir(), "a", "home")
	s := open(t, home)
	if got := perm(t, home); got != 0o700 {
		t.Errorf("home mode = %o, want 700", got)
	}
	credsPath := filepath.Join(home, store.CredsFile)
	if got := perm(t, credsPath); got != 0o600 {
		t.Errorf("creds.json mode = %o, want 600", got)
	}
	c, err := creds.Decode(readFile(t, credsPath))
	if err != nil {
		t.Fatalf("creds.json does not decode: %v", err)
	}
	if c.Revision != 0 || len(c.Env) != 0 {
		t.Errorf("creds.json = %+v, want revision 0 and no variables", c)
	}
	if _, err := os.Stat(filepath.Join(home, store.ConfigFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("extensions.json exists before the first save (err %v)", err)
	}
	if cfg := s.Config(); cfg.Revision != 0 || len(cfg.MCP.Servers) != 0 {
		t.Errorf("Config() = %+v, want an empty configuration", cfg)
	}
	if s.Home() != home {
		t.Errorf("Home() = %q, want %q", s.Home(), home)
	}
}

func TestOpenTightensExistingHomeAndCreds(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	credsPath := filepath.Join(home, store.CredsFile)
	if err := os.WriteFile(credsPath, []byte(`{"revision": 4, "env": {"TOKEN": "v"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(credsPath, 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, home)
	if got := perm(t, home); got != 0o700 {
		t.Errorf("home mode = %o, want 700", got)
	}
	if got := perm(t, credsPath); got != 0o600 {
		t.Errorf("creds.json mode = %o, want 600", got)
	}
	if v, ok := s.LookupSecret("TOKEN"); !ok || v != "v" || s.Creds().Revision != 4 {
		t.Errorf("existing creds not read: LookupSecret = %q, %v; revision %d", v, ok, s.Creds().Revision)
	}
}

func TestOpenRefusesBrokenFiles(t *testing.T) {
	for _, tc := range []struct{ file, data, want string }{
		{store.ConfigFile, `{"mcp": {"servers": {"x": {"type": "ftp"}}}}`, "mcp.servers.x.type"},
		{store.ConfigFile, `{"revision": 1} trailing`, store.ConfigFile},
		{store.CredsFile, `{"env": {"1BAD": "v"}}`, "1BAD"},
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, tc.file), []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := store.Open(home)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open with %s = %s: err = %v, want one mentioning %q", tc.file, tc.data, err, tc.want)
		}
	}
}

func TestCommitConfig(t *testing.T) {
	home := t.TempDir()
	s := open(t, home)
	path := filepath.Join(home, store.ConfigFile)

	rev, err := s.CommitConfig(0, withServer(s.Config(), "docs", stdio("/bin/docs", "--root", "/srv")))
	if err != nil || rev != 1 {
		t.Fatalf("first CommitConfig = %d, %v; want 1, nil", rev, err)
	}
	rev, err = s.CommitConfig(1, withServer(s.Config(), "more", stdio("/bin/more")))
	if err != nil || rev != 2 {
		t.Fatalf("CommitConfig based on 1 = %d, %v; want 2, nil", rev, err)
	}
	if got := s.Config(); got.Revision != 2 || len(got.MCP.Servers) != 2 {
		t.Fatalf("Config() = %+v, want revision 2 with two servers", got)
	}
	if got := perm(t, path); got != 0o600 {
		t.Errorf("extensions.json mode = %o, want 600", got)
	}
	if got := decodedOnDisk(t, home); !reflect.DeepEqual(got, s.Config()) {
		t.Errorf("file on disk = %+v, Config() = %+v", got, s.Config())
	}
	if names := dirNames(t, home); !slices.Equal(names, []string{store.CredsFile, store.ConfigFile, store.RevisionsDir}) {
		t.Errorf("home holds %q, want only the two settings files and the revisions (no temporary file)", names)
	}

	// Config() is a copy: changing it changes nothing.
	c := s.Config()
	c.MCP.Servers["docs"] = stdio("/bin/changed")
	c.Revision = 99
	if got := s.Config(); got.MCP.Servers["docs"].Command != "/bin/docs" || got.Revision != 2 {
		t.Errorf("mutating a Config() copy changed the store: %+v", got)
	}

	// A stale save is refused with the current revision, and changes nothing.
	before := readFile(t, path)
	_, err = s.CommitConfig(1, withServer(s.Config(), "late", stdio("/bin/late")))
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Current != 2 || ce.Based != 1 || ce.File != store.ConfigFile {
		t.Fatalf("stale CommitConfig: err = %#v, want *ConflictError{File: extensions.json, Based: 1, Current: 2}", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Error("a refused stale save changed extensions.json")
	}
	if _, ok := s.Config().MCP.Servers["late"]; ok {
		t.Error("a refused stale save changed Config()")
	}

	// based == 0 skips the check.
	rev, err = s.CommitConfig(0, withServer(s.Config(), "late", stdio("/bin/late")))
	if err != nil || rev != 3 {
		t.Fatalf("CommitConfig(0, …) = %d, %v; want 3, nil", rev, err)
	}
}

func TestCommitConfigRefusesInvalid(t *testing.T) {
	home := t.TempDir()
	s := open(t, home)
	path := filepath.Join(home, store.ConfigFile)
	if _, err := s.CommitConfig(0, withServer(s.Config(), "docs", stdio("/bin/docs"))); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	cfgBefore := s.Config()

	bad := withServer(s.Config(), "bad name", config.Server{Type: "ftp"})
	bad.MCP.CallTimeoutMs = -1
	_, err := s.CommitConfig(1, bad)
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("CommitConfig(invalid) = %v, want a *config.Error", err)
	}
	var paths []string
	for _, p := range cerr.Problems {
		paths = append(paths, p.Path)
	}
	for _, want := range []string{`mcp.servers["bad name"]`, `mcp.servers["bad name"].type`} {
		if !slices.Contains(paths, want) {
			t.Errorf("problems %q lack %s", paths, want)
		}
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Error("a refused save changed extensions.json")
	}
	if got := s.Config(); !reflect.DeepEqual(got, cfgBefore) {
		t.Errorf("a refused save changed Config(): %+v, want %+v", got, cfgBefore)
	}
	// The next valid save still gets the next revision.
	if rev, err := s.CommitConfig(1, withServer(s.Config(), "ok", stdio("/bin/ok"))); err != nil || rev != 2 {
		t.Errorf("CommitConfig after a refused one = %d, %v; want 2, nil", rev, err)
	}
}

func TestCommitCreds(t *testing.T) {
	home := t.TempDir()
	s := open(t, home)
	path := filepath.Join(home, store.CredsFile)

	next := s.Creds()
	next.Env["TOKEN"] = "secret-1"
	rev, err := s.CommitCreds(0, next)
	if err != nil || rev != 1 {
		t.Fatalf("CommitCreds = %d, %v; want 1, nil", rev, err)
	}
	next = s.Creds()
	next.Env["OTHER"] = "secret-2"
	if rev, err = s.CommitCreds(1, next); err != nil || rev != 2 {
		t.Fatalf("CommitCreds based on 1 = %d, %v; want 2, nil", rev, err)
	}
	if v, ok := s.LookupSecret("OTHER"); !ok || v != "secret-2" {
		t.Errorf("LookupSecret(OTHER) = %q, %v", v, ok)
	}
	if got := perm(t, path); got != 0o600 {
		t.Errorf("creds.json mode = %o, want 600", got)
	}
	onDisk, err := creds.Decode(readFile(t, path))
	if err != nil || !reflect.DeepEqual(onDisk, s.Creds()) {
		t.Errorf("creds.json on disk = %+v, %v; Creds() = %+v", onDisk, err, s.Creds())
	}

	before := readFile(t, path)
	credsBefore := s.Creds()

	stale := s.Creds()
	stale.Env["LATE"] = "x"
	_, err = s.CommitCreds(1, stale)
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Current != 2 || ce.Based != 1 || ce.File != store.CredsFile {
		t.Fatalf("stale CommitCreds: err = %#v, want *ConflictError{File: creds.json, Based: 1, Current: 2}", err)
	}

	// A name that creds.json may not hold would make the next Open fail:
	// the daemon would not start again. It is refused like a bad config.
	bad := s.Creds()
	bad.Env["1BAD"] = "x"
	bad.Env["ALSO BAD"] = "y"
	_, err = s.CommitCreds(2, bad)
	var cerr *config.Error
	if !errors.As(err, &cerr) || len(cerr.Problems) != 2 {
		t.Fatalf("CommitCreds(invalid names) = %v, want a *config.Error with two problems", err)
	}
	if !strings.Contains(err.Error(), "1BAD") || !strings.Contains(err.Error(), "ALSO BAD") {
		t.Errorf("error %q does not name both variables", err)
	}

	if !bytes.Equal(readFile(t, path), before) {
		t.Error("a refused save changed creds.json")
	}
	if got := s.Creds(); !reflect.DeepEqual(got, credsBefore) {
		t.Errorf("a refused save changed Creds(): %+v, want %+v", got, credsBefore)
	}
	if _, err := store.Open(home); err != nil {
		t.Errorf("reopening after refused saves: %v", err)
	}
}

func TestReopenReadsBackWhatWasSaved(t *testing.T) {
	home := t.TempDir()
	s := open(t, home)
	off := false
	cfg := s.Config()
	cfg.MCP.CallTimeoutMs = 1234
	cfg.MCP.Servers = map[string]config.Server{
		"docs": {
			Type: config.TypeStdio, Command: "/bin/docs", Args: []string{"--root", "/srv docs"},
			Env: map[string]config.Ref{"DOCS_TOKEN": {Env: "MY_DOCS_TOKEN"}}, CallTimeoutMs: 50,
		},
		"search": {
			Type: config.TypeHTTP, URL: "https://mcp.example.com/mcp?team=${TEAM}",
			Headers:           map[string]config.Value{"X-Api-Key": {Env: "SEARCH_KEY"}, "X-Team": {Text: "t-$TEAM"}},
			BearerTokenEnvVar: "SEARCH_TOKEN", Enabled: &off, DisabledTools: []string{"delete"},
		},
		// Empty lists mean the same as none; memory must agree with what
		// a restarted daemon reads from the file.
		"plain": {Type: config.TypeStdio, Command: "plain", Args: []string{}, Env: map[string]config.Ref{}},
	}
	if _, err := s.CommitConfig(0, cfg); err != nil {
		t.Fatal(err)
	}
	c := s.Creds()
	c.Env["MY_DOCS_TOKEN"] = "tok"
	c.Env["RAW"] = "a\xffb" // JSON cannot hold it as is
	if _, err := s.CommitCreds(0, c); err != nil {
		t.Fatal(err)
	}

	r := open(t, home)
	if got, want := r.Config(), s.Config(); !reflect.DeepEqual(got, want) {
		t.Errorf("reopened Config() = %+v\nwant %+v", got, want)
	}
	if got, want := r.Creds(), s.Creds(); !reflect.DeepEqual(got, want) {
		t.Errorf("reopened Creds() = %+v, want %+v", got, want)
	}
	if got := r.Config(); got.Revision != 1 || got.MCP.Servers["docs"].Args[1] != "/srv docs" {
		t.Errorf("reopened Config() = %+v", got)
	}
}

// TestCommitConfigFullDiskAsRoot puts the home on a tiny tmpfs and fills it: the
// save must fail loudly, and neither the file nor memory may change.
func TestCommitConfigFullDiskAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "the full disk is a tmpfs mounted for the test")
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	testenv.MountTmpfs(t, home, "256k")

	s := open(t, home)
	path := filepath.Join(home, store.ConfigFile)
	if _, err := s.CommitConfig(0, withServer(s.Config(), "docs", stdio("/bin/docs"))); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)

	filler := filepath.Join(home, "filler")
	fill(t, filler)

	next := withServer(s.Config(), "more", stdio("/bin/more", strings.Repeat("x", 8000)))
	_, err := s.CommitConfig(1, next)
	if err == nil {
		t.Fatal("CommitConfig on a full disk succeeded")
	}
	if !strings.Contains(err.Error(), "saving") {
		t.Errorf("error %q does not say that saving failed", err)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("error %q does not wrap ENOSPC", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Error("extensions.json changed after a failed save")
	}
	if names := dirNames(t, home); !slices.Equal(names, []string{store.CredsFile, store.ConfigFile, "filler"}) {
		t.Errorf("home holds %q after a failed save, want no temporary file", names)
	}
	if got := s.Config(); got.Revision != 1 || len(got.MCP.Servers) != 1 {
		t.Errorf("Config() after a failed save = %+v, want revision 1 with one server", got)
	}

	// Once there is room again, the same edit saves as the next revision.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if rev, err := s.CommitConfig(1, next); err != nil || rev != 2 {
		t.Fatalf("CommitConfig after freeing space = %d, %v; want 2, nil", rev, err)
	}
	if got := decodedOnDisk(t, home); !reflect.DeepEqual(got, s.Config()) {
		t.Errorf("file on disk = %+v, Config() = %+v", got, s.Config())
	}
}

// fill writes to path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	// A partial page may remain: take it one byte at a time.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
	}
}

// TestConcurrentWriters runs 50 read-modify-write clients at once: every
// edit must land (no lost update) and the file must stay whole.
func TestConcurrentWriters(t *testing.T) {
	const writers = 50
	home := t.TempDir()
	s := open(t, home)
	initial, err := s.CommitConfig(0, withServer(s.Config(), "seed", stdio("/bin/seed")))
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("s%02d", i)
			for {
				cur := s.Config()
				_, err := s.CommitConfig(cur.Revision, withServer(cur, name, stdio("/bin/"+name)))
				var ce *store.ConflictError
				if errors.As(err, &ce) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
				}
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	got := s.Config()
	if got.Revision != initial+writers {
		t.Errorf("revision = %d, want %d", got.Revision, initial+writers)
	}
	if len(got.MCP.Servers) != writers+1 {
		t.Errorf("%d servers, want %d", len(got.MCP.Servers), writers+1)
	}
	for i := range writers {
		name := fmt.Sprintf("s%02d", i)
		if sc, ok := got.MCP.Servers[name]; !ok || sc.Command != "/bin/"+name {
			t.Errorf("server %s lost", name)
		}
	}
	if disk := decodedOnDisk(t, home); !reflect.DeepEqual(disk, got) {
		t.Errorf("file on disk differs from Config():\n%+v\n%+v", disk, got)
	}
	if names := dirNames(t, home); !slices.Equal(names, []string{store.CredsFile, store.ConfigFile, store.RevisionsDir}) {
		t.Errorf("home holds %q, want no temporary file", names)
	}
}

// OnConfig is told of each configuration the store takes, with what it
// now holds, and of nothing a refused save would have made.
func TestOnConfigToldOfEachChange(t *testing.T) {
	s := open(t, t.TempDir())
	var told []int64
	s.OnConfig(func(cfg *config.File) { told = append(told, cfg.Revision) })
	if _, err := s.CommitConfig(0, withServer(s.Config(), "docs", stdio("/bin/docs"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitConfig(7, withServer(s.Config(), "more", stdio("/bin/more"))); err == nil {
		t.Fatal("a stale save was taken")
	}
	if _, err := s.CommitConfig(1, withServer(s.Config(), "more", stdio("/bin/more"))); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(told, []int64{1, 2}) {
		t.Errorf("told of revisions %v, want [1 2]", told)
	}
}
