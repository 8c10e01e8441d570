// Package buildinfo says which Plexus this binary is: its version, the
// commit it was built from, the Go that built it and the platform it runs
// on, all read from the build information the go command stamps into
// every binary (runtime/debug.ReadBuildInfo), so that `go install …@v1.2.3`,
// a release archive and a build from a checkout all answer truly without
// flags at build time.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `plexus version` prints.
type Info struct {
	// Version is the module version ("v1.2.3"; a pseudo-version for a
	// commit between releases), or "dev" for a build the go command could
	// not stamp (go run, a test binary).
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, with
	// "+dirty" when the tree had changes; "" when unknown.
	Commit string `json:"commit,omitempty"`
	// CommitTime is the commit's time (RFC 3339); "" when unknown.
	CommitTime string `json:"commitTime,omitempty"`
	// Go is the Go release that built it.
	Go string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// version, when set at link time (-X …/buildinfo.version=v1.2.3, as the
// release build does), names a release built from a checkout whose tag the
// go command did not stamp.
var version string

// Get reads the binary's build information.
func Get() Info {
	in := Info{Version: "dev", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		in = fromBuildInfo(bi, in.Platform)
	}
	if version != "" {
		in.Version = version
	}
	return in
}

func fromBuildInfo(bi *debug.BuildInfo, platform string) Info {
	in := Info{Version: bi.Main.Version, Go: bi.GoVersion, Platform: platform}
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = "dev"
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.CommitTime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && in.Commit != "" {
		in.Commit += "+dirty"
	}
	return in
}

// String is the one line of `plexus --version`:
// "plexus v1.2.3 (commit 0123abcd, go1.26.8, linux/amd64)".
func (in Info) String() string {
	parts := []string{}
	if in.Commit != "" {
		c := in.Commit
		if len(c) > 12 && !strings.HasSuffix(c, "+dirty") {
			c = c[:12]
		} else if len(c) > 18 {
			c = c[:12] + "+dirty"
		}
		parts = append(parts, "commit "+c)
	}
	parts = append(parts, in.Go, in.Platform)
	return fmt.Sprintf("plexus %s (%s)", in.Version, strings.Join(parts, ", "))
}
