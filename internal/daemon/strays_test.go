//go:build unix

package daemon

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catcache"
	"github.com/plexus-mcp/plexus/internal/docstore"
	"github.com/plexus-mcp/plexus/internal/oauth"
	"github.com/plexus-mcp/plexus/internal/pins"
)

// The child mode of this test binary: save one document of a home over
// and over, the way the daemon saves it (docstore.Files, atomicfile), until
// killed.
const (
	envSaveHome = "PLEXUS_TEST_SAVE_HOME"
	envSaveDoc  = "PLEXUS_TEST_SAVE_DOC"
)

func TestMain(m *testing.M) {
	if home := os.Getenv(envSaveHome); home != "" {
		saveUntilKilled(home, os.Getenv(envSaveDoc))
	}
	os.Exit(m.Run())
}

func saveUntilKilled(home, name string) {
	docs := docstore.Files{Home: home}
	data := bytes.Repeat([]byte(`{"canary":"`+strayCanary+`"}`), 1<<20) // ~30 MiB: a wide window
	for {
		if _, err := docs.Write(name, docstore.Doc{}, data, false); err != nil {
			os.Exit(3)
		}
	}
}

const strayCanary = "STRAY-TOKEN-CANARY-4be1"

// killMidSave starts a child saving name in home and SIGKILLs it while
// the save's temporary file exists; it returns that file's name. The
// kill is real: nothing of the save's own cleanup runs.
func killMidSave(t *testing.T, home, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 20; try++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envSaveHome+"="+home, envSaveDoc+"="+name)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var tmp string
		for deadline := time.Now().Add(10 * time.Second); tmp == "" && time.Now().Before(deadline); {
			// Once part of the document is in it: a kill between the
			// create and the first write leaves an empty file.
			m, _ := filepath.Glob(filepath.Join(home, "."+name+".tmp-*"))
			if fi, err := statFirst(m); err == nil && fi.Size() > 1<<20 {
				tmp = m[0]
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if tmp != "" {
			if _, err := os.Stat(tmp); err == nil {
				return filepath.Base(tmp)
			}
		}
	}
	t.Fatalf("no save of %s was caught in the middle in 20 tries", name)
	return ""
}

func statFirst(m []string) (os.FileInfo, error) {
	if len(m) == 0 {
		return nil, os.ErrNotExist
	}
	return os.Stat(m[0])
}

// TestStartRemovesTempFilesOfAKilledSave: a daemon killed while it saves
// the pins or the OAuth tokens leaves the save's temporary file — for
// oauth.json one that holds tokens, which a logout meanwhile would not
// remove. The next daemon to take the home removes them before anything
// else, and only them: files of other names, or of the same pattern but
// not as atomicfile names them, and anything that is not a regular file,
// stay.
func TestStartRemovesTempFilesOfAKilledSave(t *testing.T) {
	home := shortHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	var strays []string
	for _, name := range []string{pins.FileName, oauth.FileName} {
		strays = append(strays, killMidSave(t, home, name))
	}
	// The catalog cache is written as the documents are (atomicfile).
	catalogs := "." + catcache.FileName + ".tmp-5150"
	if err := os.WriteFile(filepath.Join(home, catalogs), []byte(`{"version":1`), 0o600); err != nil {
		t.Fatal(err)
	}
	strays = append(strays, catalogs)
	// Leftovers are full of the document's content (the canary stands
	// for the tokens of oauth.json).
	if b, _ := os.ReadFile(filepath.Join(home, strays[1])); !bytes.Contains(b, []byte(strayCanary)) {
		t.Fatalf("the killed save left %s without its content", strays[1])
	}
	outside := filepath.Join(filepath.Dir(home), "outside.json")
	if err := os.WriteFile(outside, []byte("not Plexus's"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{".pins.json.tmp-mine", "notes.json.tmp-123", ".pins.json.tmp-12x", ".creds.json.tmp-"}
	for _, k := range keep {
		if err := os.WriteFile(filepath.Join(home, k), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := ".oauth.json.tmp-77"
	if err := os.Symlink(outside, filepath.Join(home, link)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, ".pins.json.tmp-88"), 0o700); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, link, ".pins.json.tmp-88")

	runDaemon(t, home, "off")
	for _, s := range strays {
		if _, err := os.Lstat(filepath.Join(home, s)); err == nil {
			t.Errorf("%s, left by a save killed mid-way, is still in the home after a start", s)
		}
	}
	for _, k := range keep {
		if _, err := os.Lstat(filepath.Join(home, k)); err != nil {
			t.Errorf("%s is not a temporary file of Plexus's, and was removed: %v", k, err)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "not Plexus's" {
		t.Errorf("the file a link in the home points to was touched: %q, %v", b, err)
	}
}

// TestStrayCleaningWaitsForTheLock: a second daemon started on a home a
// daemon runs on removes nothing — the running daemon's save in progress
// has a temporary file of the same pattern — and does not start.
func TestStrayCleaningWaitsForTheLock(t *testing.T) {
	home := shortHome(t)
	runDaemon(t, home, "off")
	inFlight := filepath.Join(home, "."+pins.FileName+".tmp-424242")
	if err := os.WriteFile(inFlight, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), Options{Home: home, Listen: "off"})
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second daemon on the home: %v, want refused", err)
	}
	if _, err := os.Stat(inFlight); err != nil {
		t.Fatalf("the second daemon removed the running one's temporary file: %v", err)
	}
}
