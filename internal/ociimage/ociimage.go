// Package ociimage writes a container image as an OCI image layout — a
// directory of content-addressed blobs with an index.json, which
// registries' tools (skopeo, crane, oras), podman and containerd load —
// from files and a config, without a container runtime or a base image.
// The image has one layer; its bytes depend only on what goes in (every
// file's time is the epoch, the gzip header carries no name or time), so
// that the same inputs give the same digest.
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Media types of the OCI image specification (v1.1).
const (
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaConfig   = "application/vnd.oci.image.config.v1+json"
	MediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// File is one entry of the layer: a regular file (Data) or a directory.
type File struct {
	Path     string // absolute, in the image
	Mode     fs.FileMode
	Dir      bool
	UID, GID int
	Data     []byte
}

// Config is what the image runs.
type Config struct {
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	User       string            `json:"User,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

// Descriptor points at a blob.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is an image's OS and architecture.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Index is index.json.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Image is the config blob.
type Image struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       Config `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// Write writes the image of files and cfg, for arch on Linux, as an OCI
// layout in dir (which must not exist, or be empty), tagged ref
// (org.opencontainers.image.ref.name). It returns the manifest's digest.
func Write(dir string, files []File, cfg Config, arch, ref string) (string, error) {
	layer, diffID, err := tarGz(files)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return "", err
	}
	put := func(media string, data []byte) (Descriptor, error) {
		sum := sha256.Sum256(data)
		hexsum := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", hexsum), data, 0o644); err != nil {
			return Descriptor{}, err
		}
		return Descriptor{MediaType: media, Digest: "sha256:" + hexsum, Size: int64(len(data))}, nil
	}
	layerDesc, err := put(MediaLayer, layer)
	if err != nil {
		return "", err
	}
	img := Image{Architecture: arch, OS: "linux", Config: cfg}
	img.RootFS.Type = "layers"
	img.RootFS.DiffIDs = []string{diffID}
	cfgJSON, _ := json.Marshal(img)
	cfgDesc, err := put(MediaConfig, cfgJSON)
	if err != nil {
		return "", err
	}
	man, _ := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaManifest, Config: cfgDesc, Layers: []Descriptor{layerDesc}})
	manDesc, err := put(MediaManifest, man)
	if err != nil {
		return "", err
	}
	manDesc.Platform = &Platform{Architecture: arch, OS: "linux"}
	if ref != "" {
		manDesc.Annotations = map[string]string{"org.opencontainers.image.ref.name": ref}
	}
	index, _ := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaIndex, Manifests: []Descriptor{manDesc}})
	if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		return "", err
	}
	return manDesc.Digest, nil
}

// tarGz makes the layer of files: each directory leading to a file is
// made too (root's, 0755) unless files has it. It returns the gzipped tar
// and the digest of the tar (the diff id).
func tarGz(files []File) ([]byte, string, error) {
	byPath := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		f.Path = p
		byPath[p] = f
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = File{Path: d, Dir: true, Mode: 0o755}
			}
		}
	}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range byPath {
			if !yield(p) {
				return
			}
		}
	})
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, p := range paths {
		f := byPath[p]
		name := strings.TrimPrefix(p, "/")
		h := &tar.Header{Name: name, Mode: int64(f.Mode.Perm()), Uid: f.UID, Gid: f.GID, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if f.Mode&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		if f.Dir {
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
		if !f.Dir {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, "", err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	diff := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(diff[:]), nil
}
