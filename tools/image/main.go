// Command image builds the Plexus container image from this repository
// without a container runtime: it compiles plexus statically for Linux and
// writes an OCI image layout (internal/ociimage) holding it, the machine's
// CA certificates, and the user and folders the chart runs it with
// (65532, /home/plexus). There is no shell and no base image: stdio
// servers that need node or python need an image built FROM this one.
//
//	go run ./tools/image -out plexus-oci                  # a layout directory
//	go run ./tools/image -out plexus-oci -tar plexus.tar  # and a tar of it
//
// skopeo copy oci:plexus-oci docker://REGISTRY/plexus:TAG pushes it;
// podman load -i plexus.tar loads it.
package main

import (
	"archive/tar"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/plexus-mcp/plexus/internal/ociimage"
)

const uid = 65532 // the chart's runAsUser

func main() {
	out := flag.String("out", "plexus-oci", "the OCI layout `DIR` to write (must not exist)")
	tarFile := flag.String("tar", "", "also write the layout as a tar `FILE` (an oci-archive)")
	arch := flag.String("arch", runtime.GOARCH, "the `GOARCH` to build for")
	version := flag.String("version", "dev", "the image's version label")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates `FILE` to put in the image")
	flag.Parse()
	if err := run(*out, *tarFile, *arch, *version, *ca); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(out, tarFile, arch, version, ca string) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists: give a new -out", out)
	}
	tmp, err := os.MkdirTemp("", "plexus-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "plexus")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/plexus")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building plexus: %w", err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	certs, err := os.ReadFile(ca)
	if err != nil {
		return fmt.Errorf("the CA certificates (-ca): %w", err)
	}
	files := []ociimage.File{
		{Path: "/usr/local/bin/plexus", Mode: 0o755, Data: exe},
		{Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: certs},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nplexus:x:65532:65532:plexus:/home/plexus:/sbin/nologin\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nplexus:x:65532:\n")},
		{Path: "/home/plexus", Dir: true, Mode: 0o700, UID: uid, GID: uid},
		{Path: "/tmp", Dir: true, Mode: 0o777 | fs.ModeSticky},
	}
	cfg := ociimage.Config{
		Entrypoint: []string{"/usr/local/bin/plexus"},
		Cmd:        []string{"daemon"},
		Env:        []string{"PATH=/usr/local/bin", "HOME=/home/plexus", "PLEXUS_HOME=/home/plexus", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: "/home/plexus",
		Labels: map[string]string{"org.opencontainers.image.title": "plexus", "org.opencontainers.image.version": version,
			"org.opencontainers.image.description": "Plexus, an MCP host daemon"},
	}
	digest, err := ociimage.Write(out, files, cfg, arch, "plexus:"+version)
	if err != nil {
		return err
	}
	fmt.Println(digest)
	if tarFile != "" {
		return tarDir(out, tarFile)
	}
	return nil
}

// tarDir writes the layout dir as a tar (its paths relative to dir).
func tarDir(dir, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
