package upstream

import (
	"slices"
	"testing"
)

// TestWithPathExt: the names Windows tries for a bare command, as cmd.exe
// does (npx is npx.cmd).
func TestWithPathExt(t *testing.T) {
	for _, tc := range []struct {
		name, pathext string
		want          []string
	}{
		{"npx", "", []string{"npx.com", "npx.exe", "npx.bat", "npx.cmd"}},
		{"npx", ".EXE;.CMD", []string{"npx.exe", "npx.cmd"}},
		{"npx.cmd", ".EXE;.CMD", []string{"npx.cmd"}},
		{"NPX.CMD", ".exe;.cmd", []string{"NPX.CMD"}},
		{"server.v2", ".EXE", []string{"server.v2.exe"}},
		{"uvx", " .EXE ; junk ;.CMD", []string{"uvx.exe", "uvx.cmd"}},
	} {
		if got := withPathExt(tc.name, tc.pathext); !slices.Equal(got, tc.want) {
			t.Errorf("withPathExt(%q, %q) = %q, want %q", tc.name, tc.pathext, got, tc.want)
		}
	}
}

// TestPassedEnv: a Windows server gets what cmd.exe and node need to start
// (SystemRoot, PATHEXT, ComSpec, the profile), a unix one HOME and TMPDIR.
func TestPassedEnv(t *testing.T) {
	win := passedEnvFor("windows")
	for _, k := range []string{"SystemRoot", "PATHEXT", "ComSpec", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP"} {
		if !slices.Contains(win, k) {
			t.Errorf("windows: %s is not passed", k)
		}
	}
	for _, goos := range []string{"linux", "darwin", "freebsd"} {
		if got := passedEnvFor(goos); !slices.Equal(got, []string{"HOME", "TMPDIR"}) {
			t.Errorf("%s: %q", goos, got)
		}
	}
}
