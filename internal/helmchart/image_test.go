package helmchart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/ociimage"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestImage builds the image the chart runs from the repository, as CI
// does (`go run ./tools/image`: no container runtime), and inspects it as
// a registry would take it: every blob is the digest and size its
// descriptor says; one layer, holding the static plexus binary, the CA
// certificates and the user's files, and nothing else (no shell); the
// entry point is plexus, the user the chart's 65532, its home 0700 and
// its own; and the binary in the layer runs.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the image is built and inspected in the plain run")
	}
	dir := filepath.Join(t.TempDir(), "oci")
	archive := filepath.Join(t.TempDir(), "plexus.tar")
	cmd := exec.Command("go", "run", "./tools/image", "-out", dir, "-tar", archive, "-version", "test")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./tools/image: %v\n%s", err, out)
	}
	blob := func(d ociimage.Descriptor) []byte {
		t.Helper()
		hexsum, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok {
			t.Fatalf("digest %q", d.Digest)
		}
		b, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", hexsum))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hexsum || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: its content is not its digest, or %d bytes, not %d", d.Digest, len(b), d.Size)
		}
		return b
	}
	var layout struct{ ImageLayoutVersion string }
	if b, err := os.ReadFile(filepath.Join(dir, "oci-layout")); err != nil || json.Unmarshal(b, &layout) != nil || layout.ImageLayoutVersion != "1.0.0" {
		t.Fatalf("oci-layout: %s %v", b, err)
	}
	var index ociimage.Index
	if b, err := os.ReadFile(filepath.Join(dir, "index.json")); err != nil || json.Unmarshal(b, &index) != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %s %v", b, err)
	}
	md := index.Manifests[0]
	if md.MediaType != ociimage.MediaManifest || md.Platform == nil || md.Platform.OS != "linux" || md.Annotations["org.opencontainers.image.ref.name"] != "plexus:test" {
		t.Fatalf("the manifest's descriptor: %+v", md)
	}
	var man ociimage.Manifest
	if err := json.Unmarshal(blob(md), &man); err != nil || man.SchemaVersion != 2 || man.Config.MediaType != ociimage.MediaConfig || len(man.Layers) != 1 || man.Layers[0].MediaType != ociimage.MediaLayer {
		t.Fatalf("manifest: %+v %v", man, err)
	}
	var img ociimage.Image
	if err := json.Unmarshal(blob(man.Config), &img); err != nil {
		t.Fatal(err)
	}
	c := img.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/plexus"}) || !slices.Equal(c.Cmd, []string{"daemon"}) || c.User != "65532:65532" ||
		c.WorkingDir != "/home/plexus" || !slices.Contains(c.Env, "PLEXUS_HOME=/home/plexus") || img.OS != "linux" {
		t.Fatalf("config: %+v", img)
	}
	gz := blob(man.Layers[0])
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); len(img.RootFS.DiffIDs) != 1 || img.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("the layer's diff id: %v", img.RootFS.DiffIDs)
	}
	tr := tar.NewReader(bytes.NewReader(raw))
	entries := map[string]*tar.Header{}
	var exe []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = h
		if h.Name == "usr/local/bin/plexus" {
			exe, _ = io.ReadAll(tr)
		}
	}
	var names []string
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "home/", "home/plexus/",
		"tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/plexus"}
	if !slices.Equal(names, want) {
		t.Fatalf("the layer holds %v, want %v (no shell, nothing else)", names, want)
	}
	if h := entries["usr/local/bin/plexus"]; h.Mode&0o111 == 0 || h.Uid != 0 {
		t.Errorf("plexus: mode %o uid %d", h.Mode, h.Uid)
	}
	if h := entries["home/plexus/"]; h.Uid != 65532 || h.Gid != 65532 || h.Mode&0o777 != 0o700 {
		t.Errorf("/home/plexus: uid %d gid %d mode %o", h.Uid, h.Gid, h.Mode)
	}
	if h := entries["tmp/"]; h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: mode %o, want 1777", h.Mode)
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("plexus in the image is dynamically linked: it needs a loader the image does not have")
		}
	}
	bin := filepath.Join(t.TempDir(), "plexus")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "daemon", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "--store-url-file") {
		t.Fatalf("plexus from the image, daemon --help: %v\n%s", err, out)
	}
	if st, err := os.Stat(archive); err != nil || st.Size() < int64(len(gz)) {
		t.Fatalf("the layout's tar: %v", err)
	}
	t.Logf("image %s: one layer of %d KiB (gzip), %d KiB unpacked", md.Digest[:19], len(gz)>>10, len(raw)>>10)
}
