// Command release builds everything a Plexus release ships, with Go and
// Debian's dpkg-deb alone, and publishes nothing:
//
//   - plexus for linux, darwin, windows and freebsd on amd64 and arm64,
//     each in an archive with the README (.tar.gz; .zip for Windows);
//   - a Debian package for linux/amd64 and linux/arm64;
//   - a Homebrew formula for macOS and Linux naming the archives and their
//     checksums;
//   - SHA256SUMS over all of them.
//
// With --check it then verifies what it built: every checksum, every
// archive's listing, each Debian package's control data and contents
// (dpkg-deb --info, --contents), and the formula's checksums. .ci/cross
// runs it so on every CI run.
//
//	go run ./tools/release --version v1.2.3 [--out dist] [--check]
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// platforms a release ships for.
var platforms = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
	{"freebsd", "amd64"}, {"freebsd", "arm64"},
}

const module = "github.com/plexus-mcp/plexus"

// versionRule is a release version: vMAJOR.MINOR.PATCH and an optional
// pre-release.
var versionRule = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func main() {
	version := flag.String("version", "v0.0.0-dev", "the release's `VERSION` (vX.Y.Z)")
	out := flag.String("out", "dist", "the `DIR` to write into (emptied first)")
	check := flag.Bool("check", false, "verify what was built: checksums, listings, the Debian packages, the formula")
	urlBase := flag.String("url", "", "where the archives will be downloaded from (default: the GitHub release of VERSION)")
	only := flag.String("only", "", "build only these `OS/ARCH,...` (a developer's quick look; the formula needs darwin and linux)")
	flag.Parse()
	if *only != "" {
		want := strings.Split(*only, ",")
		platforms = slices.DeleteFunc(platforms, func(p struct{ os, arch string }) bool { return !slices.Contains(want, p.os+"/"+p.arch) })
	}
	if !versionRule.MatchString(*version) {
		fail(fmt.Errorf("--version %q: want vX.Y.Z", *version))
	}
	if *urlBase == "" {
		*urlBase = "https://" + module + "/releases/download/" + *version
	}
	start := time.Now()
	files, err := build(*version, *out, *urlBase)
	if err != nil {
		fail(err)
	}
	if *check {
		if err := verify(*out, files); err != nil {
			fail(err)
		}
	}
	fmt.Fprintf(os.Stderr, "release %s: %d files in %s (%s)\n", *version, len(files), *out, time.Since(start).Round(time.Millisecond))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}

// build writes the release into out and returns its files' names, sorted.
func build(version, out, urlBase string) ([]string, error) {
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, "build"), 0o755); err != nil {
		return nil, err
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return nil, fmt.Errorf("run it from the repository's root: %w", err)
	}
	var files []string
	sums := map[string]string{}
	for _, p := range platforms {
		exe := "plexus"
		if p.os == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(out, "build", p.os+"_"+p.arch, exe)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X "+module+"/internal/buildinfo.version="+version, "-o", bin, "./cmd/plexus")
		cmd.Env = append(os.Environ(), "GOOS="+p.os, "GOARCH="+p.arch, "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building for %s/%s: %w", p.os, p.arch, err)
		}
		name := fmt.Sprintf("plexus_%s_%s_%s", strings.TrimPrefix(version, "v"), p.os, p.arch)
		var archive string
		if p.os == "windows" {
			archive = name + ".zip"
			err = writeZip(filepath.Join(out, archive), name, bin, exe, readme)
		} else {
			archive = name + ".tar.gz"
			err = writeTarGz(filepath.Join(out, archive), name, bin, exe, readme)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, archive)
		if p.os == "linux" {
			deb, err := writeDeb(out, version, p.arch, bin, readme)
			if err != nil {
				return nil, err
			}
			files = append(files, deb)
		}
	}
	for _, f := range files {
		s, err := sha256File(filepath.Join(out, f))
		if err != nil {
			return nil, err
		}
		sums[f] = s
	}
	formula := formulaText(version, urlBase, sums)
	if err := os.WriteFile(filepath.Join(out, "plexus.rb"), []byte(formula), 0o644); err != nil {
		return nil, err
	}
	files = append(files, "plexus.rb")
	if sums["plexus.rb"], err = sha256File(filepath.Join(out, "plexus.rb")); err != nil {
		return nil, err
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", sums[f], f)
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return files, os.RemoveAll(filepath.Join(out, "build"))
}

// entry is one file of an archive.
type entry struct {
	name string
	data []byte
	mode int64
}

func archiveEntries(dir, bin, exe string, readme []byte) ([]entry, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	return []entry{{dir + "/" + exe, b, 0o755}, {dir + "/README.md", readme, 0o644}}, nil
}

func writeTarGz(path, dir, bin, exe string, readme []byte) error {
	entries, err := archiveEntries(dir, bin, exe, readme)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func writeZip(path, dir, bin, exe string, readme []byte) error {
	entries, err := archiveEntries(dir, bin, exe, readme)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(e.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// writeDeb builds the Debian package of linux/arch with dpkg-deb.
func writeDeb(out, version, arch, bin string, readme []byte) (string, error) {
	v := strings.TrimPrefix(version, "v")
	name := fmt.Sprintf("plexus_%s_%s.deb", v, arch)
	root := filepath.Join(out, "build", "deb_"+arch)
	for _, d := range []string{"DEBIAN", "usr/bin", "usr/share/doc/plexus"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	control := fmt.Sprintf(`Package: plexus
Version: %s
Section: net
Priority: optional
Architecture: %s
Maintainer: Plexus <plexus@users.noreply.github.com>
Homepage: https://%s
Description: one daemon for your MCP servers, shared with every agent
 Plexus owns your Model Context Protocol servers (stdio, streamable HTTP,
 SSE) with their credentials and lifecycle, and serves their tools,
 resources and prompts to every agent on the machine through one entry.
`, v, arch, module)
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{"DEBIAN/control", []byte(control), 0o644},
		{"usr/bin/plexus", b, 0o755},
		{"usr/share/doc/plexus/README.md", readme, 0o644},
	} {
		if err := os.WriteFile(filepath.Join(root, f.path), f.data, f.mode); err != nil {
			return "", err
		}
		if err := os.Chmod(filepath.Join(root, f.path), f.mode); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, filepath.Join(out, name))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb (Debian's dpkg package): %v\n%s", err, msg)
	}
	return name, nil
}

// formulaText is the Homebrew formula: the macOS and Linux archives of
// each architecture with their checksums.
func formulaText(version, urlBase string, sums map[string]string) string {
	v := strings.TrimPrefix(version, "v")
	archive := func(os, arch string) string { return fmt.Sprintf("plexus_%s_%s_%s.tar.gz", v, os, arch) }
	block := func(os, arch string) string {
		a := archive(os, arch)
		return fmt.Sprintf("      url \"%s/%s\"\n      sha256 \"%s\"\n", urlBase, a, sums[a])
	}
	return `# Homebrew formula for Plexus ` + version + `, made by tools/release.
class Plexus < Formula
  desc "One daemon for your MCP servers, shared with every agent"
  homepage "https://` + module + `"
  version "` + v + `"

  on_macos do
    on_arm do
` + block("darwin", "arm64") + `    end
    on_intel do
` + block("darwin", "amd64") + `    end
  end

  on_linux do
    on_arm do
` + block("linux", "arm64") + `    end
    on_intel do
` + block("linux", "amd64") + `    end
  end

  def install
    bin.install "plexus"
  end

  service do
    run [opt_bin/"plexus", "daemon"]
    keep_alive successful_exit: false
  end

  test do
    assert_match "plexus ` + version + `", shell_output("#{bin}/plexus --version")
  end
end
`
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
