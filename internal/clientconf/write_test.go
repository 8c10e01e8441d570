package clientconf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// userOptions are Options for a user whose home is home, with nothing
// taken from the environment.
func userOptions(home string) Options {
	return Options{Home: home, Dir: filepath.Join(home, "project"), GOOS: "linux", Command: "/usr/local/bin/plexus"}
}

// TestProjectSymlinkOutOfProject: a project's .mcp.json (or its .cursor
// folder) that is a link to a file outside the project — another program's
// credentials, as a cloned repository can ship — is refused: nothing is
// written there, nor beside it.
func TestProjectSymlinkOutOfProject(t *testing.T) {
	home := t.TempDir()
	o := userOptions(home)
	o.Scope = ScopeProject
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A credentials file that happens to be JSON, as many are.
	creds := filepath.Join(home, ".config", "gh", "hosts.json")
	if err := os.MkdirAll(filepath.Dir(creds), 0o700); err != nil {
		t.Fatal(err)
	}
	const secret = `{"github.com": {"oauth_token": "CANARY-gh-token"}}` + "\n"
	if err := os.WriteFile(creds, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.config/gh/hosts.json", filepath.Join(o.Dir, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	// A folder of the project that leads out of it.
	if err := os.Symlink(filepath.Join(home, ".config", "gh"), filepath.Join(o.Dir, ".cursor")); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"claude", "cursor"} {
		for _, connect := range []bool{true, false} {
			p, err := Prepare(client, o, connect)
			if err == nil {
				_, err = p.Write(time.Now())
			}
			if err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("%s (connect %v): %v, want a refusal of the link out of the project", client, connect, err)
			}
		}
	}
	if b, _ := os.ReadFile(creds); string(b) != secret {
		t.Fatalf("the credentials file was changed:\n%s", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(creds))
	if len(entries) != 1 {
		t.Fatalf("files were written beside the credentials: %v", entries)
	}

	// A link that stays in the project (a shared file of the repository)
	// is followed as before.
	os.Remove(filepath.Join(o.Dir, ".mcp.json"))
	if err := os.WriteFile(filepath.Join(o.Dir, "mcp.shared.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("mcp.shared.json", filepath.Join(o.Dir, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare("claude", o, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(time.Now()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(o.Dir, "mcp.shared.json")); !strings.Contains(string(b), o.Command) {
		t.Fatalf("the linked file in the project was not written:\n%s", b)
	}
}

// TestUserSymlinkOutOfHome: a user file that links out of the home (and out
// of its own folder) is refused; one that links within the home, as
// dotfile managers make, is followed.
func TestUserSymlinkOutOfHome(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	outside := filepath.Join(root, "elsewhere", "settings.json")
	for _, d := range []string{filepath.Join(home, ".cursor"), filepath.Join(home, "dotfiles"), filepath.Dir(outside)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := userOptions(home)
	if err := os.Symlink(outside, filepath.Join(home, ".cursor", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare("cursor", o, true); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("a link out of the home: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "{}\n" {
		t.Fatalf("the file outside was changed: %s", b)
	}
	dot := filepath.Join(home, "dotfiles", "cursor.json")
	if err := os.WriteFile(dot, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(home, ".cursor", "mcp.json"))
	if err := os.Symlink(dot, filepath.Join(home, ".cursor", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare("cursor", o, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(time.Now()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(home, ".cursor", "mcp.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v", err)
	}
	if b, _ := os.ReadFile(dot); !strings.Contains(string(b), o.Command) {
		t.Fatalf("the dotfile was not written:\n%s", b)
	}
}

// TestBackupsPrivateAndBounded: a backup holds the user's secrets as the
// file did, so it is 0600 whatever the file's mode, and each file keeps at
// most maxBackups of them: the oldest go.
func TestBackupsPrivateAndBounded(t *testing.T) {
	home := t.TempDir()
	o := userOptions(home)
	path := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	const before = `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "CANARY-backup"}}}}` + "\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var first string
	for i := range 2 * maxBackups {
		p, err := Prepare("cursor", o, i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		backup, err := p.Write(now.Add(time.Duration(i) * time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = backup
		}
		fi, err := os.Stat(backup)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup %s has mode %v, want 0600", backup, fi.Mode().Perm())
		}
	}
	all, _ := filepath.Glob(path + ".plexus-backup-*")
	if len(all) != maxBackups {
		t.Fatalf("%d backups kept, want %d: %v", len(all), maxBackups, all)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("the oldest backup is still there: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the file's own mode changed to %v", fi.Mode().Perm())
	}
}

// TestConcurrentWriterLosesNothing: a client that keeps rewriting its file
// (read, add a key, write a temporary file, rename it over — as Claude Code
// does with ~/.claude.json) while connect and disconnect run loses none of
// its writes: each of its keys is in every later read and in the file at
// the end — but for a write the client itself undid, having read the file
// in the microseconds between replace's exchange and its swap back (it
// builds on Plexus's text then, which lacks its newest key; POSIX offers
// no compare-and-swap of a file's contents). That moment is marked by a
// hook, so a loss outside it fails the test: it did when the swap back
// was taken out.
func TestConcurrentWriterLosesNothing(t *testing.T) {
	home := t.TempDir()
	o := userOptions(home)
	path := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writes := 400
	if testing.Short() {
		writes = 150
	}
	// The one moment replace cannot close: between its exchange and the
	// swap back, the file shows Plexus's text, made of the client's older
	// one; a client that reads it then builds on it. The client below
	// knows when its read overlapped such a moment (an odd count: open).
	var moments atomic.Int64
	swapWindow = func() { moments.Add(1) }
	defer func() { swapWindow = nil }()
	excused := map[string]bool{} // keys missing from a read in such a moment
	stop := make(chan struct{})  // closed when the client is done
	var wg sync.WaitGroup
	var writerErr error
	wg.Go(func() {
		for i := range writes {
			var doc map[string]any
			before := moments.Load()
			b, err := os.ReadFile(path)
			inMoment := before%2 == 1 || moments.Load() != before
			if err == nil {
				err = json.Unmarshal(b, &doc)
			}
			if err != nil {
				writerErr = fmt.Errorf("write %d: reading: %v", i, err)
				return
			}
			// Every earlier write of the client is in what it reads, but
			// for one read in that moment (and what it then lost).
			for j := range i {
				k := fmt.Sprintf("k%04d", j)
				if _, ok := doc[k]; ok || excused[k] {
					continue
				}
				if !inMoment {
					writerErr = fmt.Errorf("write %d: the client's write %d is gone, and no swap was under way as it read", i, j)
					return
				}
				excused[k] = true
			}
			doc[fmt.Sprintf("k%04d", i)] = i
			out, _ := json.MarshalIndent(doc, "", "  ")
			tmp := fmt.Sprintf("%s.client-tmp-%d", path, i)
			if err := os.WriteFile(tmp, out, 0o600); err != nil {
				writerErr = err
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				writerErr = err
				return
			}
			time.Sleep(time.Millisecond) // a busy client, not a loop without end
		}
	})
	go func() { wg.Wait(); close(stop) }()
	runs := 0
	var runErr error
	for done := false; !done && runErr == nil; runs++ {
		select {
		case <-stop:
			done = true
		default:
		}
		p, err := Prepare("cursor", o, runs%2 == 0)
		if err == nil {
			_, err = p.Write(time.Now())
		}
		if err != nil {
			runErr = fmt.Errorf("run %d: %v", runs, err)
		}
	}
	<-stop
	if runErr != nil || writerErr != nil {
		t.Fatal(runErr, writerErr)
	}
	var doc map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i := range writes {
		k := fmt.Sprintf("k%04d", i)
		if _, ok := doc[k]; !ok && !excused[k] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of the client's %d writes were lost over %d connects and disconnects", lost, writes, runs)
	}
	t.Logf("%d client writes, %d connects and disconnects, none lost but %d that the client overwrote after reading Plexus's text between its two swaps", writes, runs, len(excused))
}
