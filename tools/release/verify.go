package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// verify checks a built release: SHA256SUMS lists exactly files and each
// sum is right; each archive holds plexus and the README; each Debian
// package has its control data and installs /usr/bin/plexus; the formula
// names the archives' sums. It prints what it checked.
func verify(out string, files []string) error {
	b, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		return err
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("SHA256SUMS: a bad line %q", line)
		}
		got, err := sha256File(filepath.Join(out, name))
		if err != nil {
			return err
		}
		if got != sum {
			return fmt.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, sum)
		}
		sums[name] = sum
	}
	for _, f := range files {
		if sums[f] == "" {
			return fmt.Errorf("SHA256SUMS lacks %s", f)
		}
	}
	for _, f := range files {
		var names []string
		switch {
		case strings.HasSuffix(f, ".tar.gz"):
			names, err = tarNames(filepath.Join(out, f))
		case strings.HasSuffix(f, ".zip"):
			names, err = zipNames(filepath.Join(out, f))
		case strings.HasSuffix(f, ".deb"):
			err = checkDeb(filepath.Join(out, f))
		case f == "plexus.rb":
			err = checkFormula(filepath.Join(out, f), sums)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if names != nil {
			dir := strings.TrimSuffix(strings.TrimSuffix(f, ".tar.gz"), ".zip")
			exe := dir + "/plexus"
			if strings.Contains(f, "_windows_") {
				exe += ".exe"
			}
			if !slices.Contains(names, exe) || !slices.Contains(names, dir+"/README.md") {
				return fmt.Errorf("%s holds %v, want %s and the README", f, names, exe)
			}
		}
		fmt.Fprintf(os.Stderr, "ok  %s  %s\n", sums[f][:12], f)
	}
	return nil
}

func tarNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		names = append(names, h.Name)
	}
}

func zipNames(path string) ([]string, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names, nil
}

// checkDeb inspects a Debian package with dpkg-deb.
func checkDeb(path string) error {
	info, err := exec.Command("dpkg-deb", "--info", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("dpkg-deb --info: %v\n%s", err, info)
	}
	contents, err := exec.Command("dpkg-deb", "--contents", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("dpkg-deb --contents: %v\n%s", err, contents)
	}
	for _, want := range []string{"Package: plexus", "Architecture: "} {
		if !strings.Contains(string(info), want) {
			return fmt.Errorf("control data lacks %q:\n%s", want, info)
		}
	}
	if !strings.Contains(string(contents), "-rwxr-xr-x root/root") || !strings.Contains(string(contents), "./usr/bin/plexus") {
		return fmt.Errorf("does not install /usr/bin/plexus, root's and executable:\n%s", contents)
	}
	return nil
}

// checkFormula checks that the formula names each archive it downloads
// with that archive's sum.
func checkFormula(path string, sums map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	n := 0
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "url ") || i+1 >= len(lines) {
			continue
		}
		archive := filepath.Base(strings.Trim(strings.TrimPrefix(l, "url "), `"`))
		want := `sha256 "` + sums[archive] + `"`
		if sums[archive] == "" || strings.TrimSpace(lines[i+1]) != want {
			return fmt.Errorf("%s is not named with its sha256", archive)
		}
		n++
	}
	if n != 4 {
		return fmt.Errorf("%d archives named, want the 4 of macOS and Linux", n)
	}
	return nil
}
