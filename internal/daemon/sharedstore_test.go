package daemon

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveStore: the URL comes from --store, --store-url-file or
// PLEXUS_STORE_URL, the key from --store-key-file or PLEXUS_STORE_KEY;
// both variables are removed from the environment once read; a password
// on the command line is deprecated (said, never quoted); errors never
// quote a key.
func TestResolveStore(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	keyText := base64.StdEncoding.EncodeToString(key)
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "url")
	os.WriteFile(urlFile, []byte("postgres://u:from-file@db/x\n"), 0o600)
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte(keyText+"\n"), 0o600)

	t.Setenv(URLEnv, "postgres://u:from-env@db/x")
	t.Setenv(KeyEnv, keyText)
	so, keys, warn, err := resolveStore(StoreOptions{})
	if err != nil || so.URL != "postgres://u:from-env@db/x" || string(keys.Current) != string(key) || warn != "" {
		t.Fatalf("from the environment: %+v %v %q %v", so, keys.Current != nil, warn, err)
	}
	if _, set := os.LookupEnv(URLEnv); set {
		t.Fatalf("%s left in the environment", URLEnv)
	}
	if _, set := os.LookupEnv(KeyEnv); set {
		t.Fatalf("%s left in the environment", KeyEnv)
	}

	so, keys, warn, err = resolveStore(StoreOptions{URLFile: urlFile, KeyFile: keyFile})
	if err != nil || so.URL != "postgres://u:from-file@db/x" || string(keys.Current) != string(key) || warn != "" {
		t.Fatalf("from files: %+v %q %v", so, warn, err)
	}

	_, _, warn, err = resolveStore(StoreOptions{URL: "postgres://u:CANARY-pw@db/x", KeyFile: keyFile})
	if err != nil || !strings.Contains(warn, "--store-url-file") || strings.Contains(warn, "CANARY") {
		t.Fatalf("a password on the command line: %q %v", warn, err)
	}
	if _, _, warn, _ = resolveStore(StoreOptions{URL: "postgres://u@db/x", KeyFile: keyFile}); warn != "" {
		t.Fatalf("no password on the command line, yet warned: %q", warn)
	}
	if _, _, _, err = resolveStore(StoreOptions{URL: "postgres://u@db/x", URLFile: urlFile}); err == nil {
		t.Fatal("the URL given twice was taken")
	}

	t.Setenv(KeyEnv, "CANARY-not-base64!")
	if _, _, _, err = resolveStore(StoreOptions{URL: "postgres://u@db/x"}); err == nil || strings.Contains(err.Error(), "CANARY") || !strings.Contains(err.Error(), KeyEnv) {
		t.Fatalf("a bad key in the environment: %v", err)
	}
}
