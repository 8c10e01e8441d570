package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestSecretsCovered: a server allowed to read a folder reads every file
// of it but the daemon's secrets there — a file, and a file in a secret
// folder — which are covered in its mount namespace (opening one is
// refused), however it names them; a rule for a secret itself is refused
// before anything runs.
func TestSecretsCovered(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Network: Network{Mode: NetworkNone}}
	if m := p.Missing(Detect()); len(m) > 0 {
		t.Fatalf("this kernel cannot run a sandbox: %s", strings.Join(m, "; "))
	}
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	secretDir := filepath.Join(shared, "keys")
	for _, d := range []string{shared, secretDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"shared/plain.txt":  "PLAIN-readable",
		"shared/store.key":  "CANARY-store-key",
		"shared/keys/other": "CANARY-in-a-secret-folder",
	}
	for rel, content := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A second name for the key, through a symlink the server may read.
	if err := os.Symlink("store.key", filepath.Join(shared, "link.key")); err != nil {
		t.Fatal(err)
	}
	p.Private = filepath.Join(dir, "private")
	p.Read = []string{shared}
	p.Secrets = []string{filepath.Join(shared, "store.key"), secretDir}
	script := `for f in plain.txt store.key link.key keys/other; do cat "$0/$f" 2>&1; echo " <$f>"; done`
	args, err := LauncherArgs(p, self, "/bin/sh", []string{"-c", script, shared})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Isolate(cmd.SysProcAttr, p)
	if err := os.MkdirAll(p.Private, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.Dir = p.Private
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	t.Logf("the server saw:\n%s", got)
	if !strings.Contains(got, "PLAIN-readable <plain.txt>") {
		t.Errorf("a file beside the secret is not readable")
	}
	if strings.Contains(got, "CANARY") {
		t.Errorf("a secret was read")
	}
	for _, f := range []string{"store.key", "link.key"} {
		if !strings.Contains(got, f+": Permission denied") {
			t.Errorf("%s: not refused as a file it may not open", f)
		}
	}

	// Listing the secret itself is an error, not a silently narrower rule.
	q := *p
	q.Read = []string{filepath.Join(shared, "store.key")}
	if _, err := fileRules(&q, "/bin/sh", ""); err == nil || !strings.Contains(err.Error(), "never reads") {
		t.Errorf("a rule for the secret itself: %v", err)
	}
	q.Read = []string{shared}
	rules, err := fileRules(&q, "/bin/sh", "")
	if err != nil || !slices.ContainsFunc(rules, func(a access) bool { return a.path == shared }) {
		t.Errorf("the folder holding a secret is not readable: %v %v", rules, err)
	}
}
