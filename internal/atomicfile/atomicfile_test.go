package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "creds.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "two" {
		t.Fatalf("content = %q, %v", got, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("leftover temporary files: %v", entries)
	}
}

func TestWriteFileFailureLeavesOriginal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "extensions.json")
	if err := WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A read-only directory makes the temp file impossible; root ignores
	// permissions, so use a path whose directory does not exist instead.
	if err := WriteFile(filepath.Join(dir, "missing", "x"), []byte("new"), 0o600); err == nil {
		t.Fatal("want an error for a missing directory")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Fatalf("original changed: %q", got)
	}
}

// TestTempNamesAreRecognised: the names WriteFile gives its temporary
// files are the ones IsTemp (and so RemoveStrays) takes, and no others.
func TestTempNamesAreRecognised(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pins.json")
	var seen []string
	SetTestHook(func(step string) {
		if step == "written" {
			seen, _ = filepath.Glob(filepath.Join(dir, TempPattern("pins.json")))
		}
	})
	defer SetTestHook(nil)
	if err := WriteFile(p, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !IsTemp(filepath.Base(seen[0]), "pins.json") {
		t.Fatalf("the write's temporary file %v is not one IsTemp names", seen)
	}
	for _, tc := range []struct {
		file string
		want bool
	}{
		{".pins.json.tmp-1", true},
		{".pins.json.tmp-4294967295", true},
		{".pins.json.tmp-", false},
		{".pins.json.tmp-12a", false},
		{".pins.json.tmp-mine", false},
		{"pins.json.tmp-12", false},
		{".pins.json.tmp-1/2", false},
		{".pinsxjson.tmp-12", false},
		{".pins.json.tmp-123456789012345678901", false},
	} {
		if got := IsTemp(tc.file, "pins.json"); got != tc.want {
			t.Errorf("IsTemp(%q) = %v, want %v", tc.file, got, tc.want)
		}
	}
}

// FuzzIsTemp: whatever a directory holds, IsTemp takes only names of
// the one shape, within the home.
func FuzzIsTemp(f *testing.F) {
	f.Add(".pins.json.tmp-123", "pins.json")
	f.Add("../.pins.json.tmp-1", "pins.json")
	f.Add(".a.tmp-.tmp-1", "a.tmp-")
	f.Fuzz(func(t *testing.T, file, name string) {
		if !IsTemp(file, name) {
			return
		}
		rest, ok := strings.CutPrefix(file, "."+name+".tmp-")
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || len(rest) > 20 {
			t.Fatalf("IsTemp(%q, %q) took a name of another shape", file, name)
		}
	})
}
