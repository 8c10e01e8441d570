package upstream

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// toolDirs are the folders where version managers and Homebrew put node,
// npx, uvx and their kind, that exist on this machine: a fallback after the
// login shell's PATH, for a daemon started by launchd or systemd whose
// shell profile did not answer (or is not a login shell's). root is "/"
// but for tests; home is the user's home.
func toolDirs(root, home, goos string) []string {
	cands := []string{
		filepath.Join(home, ".volta", "bin"),                    // volta
		filepath.Join(home, ".local", "share", "mise", "shims"), // mise
		filepath.Join(home, ".asdf", "shims"),                   // asdf
	}
	if d := newestNVMNode(filepath.Join(home, ".nvm", "versions", "node")); d != "" {
		cands = append(cands, d) // nvm: its newest node
	}
	switch goos {
	case "darwin":
		cands = append(cands, filepath.Join(root, "opt", "homebrew", "bin"), filepath.Join(root, "usr", "local", "bin"))
	case "linux":
		cands = append(cands, filepath.Join(root, "home", "linuxbrew", ".linuxbrew", "bin"), filepath.Join(home, ".linuxbrew", "bin"))
	}
	cands = append(cands, filepath.Join(home, ".local", "bin"))
	var out []string
	for _, d := range cands {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// newestNVMNode is the bin folder of the highest node version nvm has
// installed under dir (v22.3.0 over v9.11.2), or "".
func newestNVMNode(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var best []int
	bestName := ""
	for _, e := range entries {
		v, ok := parseVersion(e.Name())
		if ok && e.IsDir() && (best == nil || slices.Compare(v, best) > 0) {
			best, bestName = v, e.Name()
		}
	}
	if bestName == "" {
		return ""
	}
	return filepath.Join(dir, bestName, "bin")
}

// parseVersion reads "v22.3.0" as [22 3 0].
func parseVersion(name string) ([]int, bool) {
	parts := strings.Split(strings.TrimPrefix(name, "v"), ".")
	if len(parts) != 3 || !strings.HasPrefix(name, "v") {
		return nil, false
	}
	v := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		v[i] = n
	}
	return v, true
}
