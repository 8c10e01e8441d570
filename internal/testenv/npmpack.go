package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"testing"
	"time"
)

// NPMPackage writes a package tarball as `npm pack` makes it, each file
// (path under the package, then contents) under "package/", executable. A
// test installs it with npx or npm from the file, without a registry.
func NPMPackage(t testing.TB, path string, files ...[2]string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: "package/" + f[0], Mode: 0o755, Size: int64(len(f[1])), ModTime: time.Unix(499162500, 0)}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
