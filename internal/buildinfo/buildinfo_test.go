package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want Info
		line string
	}{
		{"go install at a tag",
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			Info{Version: "v1.4.0", Go: "go1.26.8", Platform: "linux/amd64"},
			"plexus v1.4.0 (go1.26.8, linux/amd64)"},
		{"a checkout with changes",
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "6a67c764bd28483e91d120897562e1ea4858da1e"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: "dev", Commit: "6a67c764bd28483e91d120897562e1ea4858da1e+dirty", CommitTime: "2026-12-01T10:00:00Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"plexus dev (commit 6a67c764bd28+dirty, go1.26.8, linux/amd64)"},
		{"a stamped pseudo-version",
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201100000-6a67c764bd28"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "6a67c764bd28483e91d120897562e1ea4858da1e"}, {Key: "vcs.modified", Value: "false"}}},
			Info{Version: "v0.0.0-20261201100000-6a67c764bd28", Commit: "6a67c764bd28483e91d120897562e1ea4858da1e", Go: "go1.26.8", Platform: "linux/amd64"},
			"plexus v0.0.0-20261201100000-6a67c764bd28 (commit 6a67c764bd28, go1.26.8, linux/amd64)"},
	} {
		got := fromBuildInfo(&tc.bi, "linux/amd64")
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if got.String() != tc.line {
			t.Errorf("%s: %q, want %q", tc.name, got.String(), tc.line)
		}
	}
}
