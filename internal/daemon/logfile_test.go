package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLogRotatesBySize(t *testing.T) {
	home := t.TempDir()
	l, err := openLog(home)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	line := append(bytes.Repeat([]byte("x"), 1023), '\n')
	for range (maxLogBytes / len(line)) * 3 {
		if _, err := l.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	cur, err1 := os.Stat(filepath.Join(home, "logs.jsonl"))
	prev, err2 := os.Stat(filepath.Join(home, "logs.jsonl.1"))
	if err1 != nil || err2 != nil {
		t.Fatalf("files: %v %v", err1, err2)
	}
	if cur.Size() > maxLogBytes || prev.Size() > maxLogBytes {
		t.Fatalf("sizes %d and %d exceed %d", cur.Size(), prev.Size(), maxLogBytes)
	}
	if prev.Size()%int64(len(line)) != 0 || cur.Size()%int64(len(line)) != 0 {
		t.Fatal("a record was split across files")
	}
	if cur.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", cur.Mode().Perm())
	}
}
