package upstream

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestToolDirs lays out a fake home and root the way volta, mise, asdf,
// nvm (two node versions) and Homebrew do, and checks which folders each
// system finds, in order.
func TestToolDirs(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home", "ann")
	for _, d := range []string{
		".volta/bin", ".local/share/mise/shims", ".asdf/shims",
		".nvm/versions/node/v9.11.2/bin", ".nvm/versions/node/v22.3.0/bin", ".nvm/versions/node/v20.10.0/bin",
		".local/bin",
	} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"opt/homebrew/bin", "home/linuxbrew/.linuxbrew/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Not a version: ignored.
	os.MkdirAll(filepath.Join(home, ".nvm/versions/node/system/bin"), 0o755)
	common := []string{
		filepath.Join(home, ".volta/bin"), filepath.Join(home, ".local/share/mise/shims"),
		filepath.Join(home, ".asdf/shims"), filepath.Join(home, ".nvm/versions/node/v22.3.0/bin"),
	}
	for goos, want := range map[string][]string{
		"darwin":  append(slices.Clone(common), filepath.Join(root, "opt/homebrew/bin"), filepath.Join(home, ".local/bin")),
		"linux":   append(slices.Clone(common), filepath.Join(root, "home/linuxbrew/.linuxbrew/bin"), filepath.Join(home, ".local/bin")),
		"freebsd": append(slices.Clone(common), filepath.Join(home, ".local/bin")),
	} {
		if got := toolDirs(root, home, goos); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", goos, got, want)
		}
	}
	if got := toolDirs(root, filepath.Join(root, "nobody"), "linux"); !slices.Equal(got, []string{filepath.Join(root, "home/linuxbrew/.linuxbrew/bin")}) {
		t.Errorf("empty home: %q", got)
	}
}
