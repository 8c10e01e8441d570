package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// systemRead are the system's read-only parts a server needs to run.
// /etc is not listed whole: it holds secrets readable by root.
var systemRead = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
	"/proc", "/sys",
	"/etc/alternatives", "/etc/ca-certificates", "/etc/ssl", "/etc/pki",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf",
	"/etc/gai.conf", "/etc/passwd", "/etc/group", "/etc/localtime",
	"/etc/timezone", "/etc/os-release", "/etc/mime.types", "/etc/npmrc",
	"/etc/python3", "/etc/node", "/run/systemd/resolve",
	"/dev/urandom", "/dev/random", "/dev/zero", "/dev/full",
}

// systemWrite are the device files every program may write.
var systemWrite = []string{"/dev/null", "/dev/tty"}

// cacheDirs are package-manager caches under the home that npx and uvx use
// to run a server (read and write: they download into them).
var cacheDirs = []string{".npm", ".cache/uv", ".cache/pip", ".local/share/uv"}

// access is one path with its rights.
type access struct {
	path  string
	write bool
	dir   bool
}

// fileRules is every path the server may use: the system's, the
// executable's own tree, the caches, the policy's folders and the private
// folder. Missing paths are left out, except the policy's own: a listed
// folder that does not exist is an error, not a silent gap.
func fileRules(p *Policy, path, home string) ([]access, error) {
	var out []access
	add := func(path string, write, must bool) error {
		if h := hiddenBy(p.Hidden, p.Private, path); h != "" {
			if must {
				return fmt.Errorf("%s would show %s, which a sandboxed server never sees", path, h)
			}
			return nil
		}
		fi, err := os.Stat(path)
		if err != nil {
			if must {
				return err
			}
			return nil
		}
		out = append(out, access{path: path, write: write, dir: fi.IsDir()})
		return nil
	}
	for _, s := range systemRead {
		add(s, false, false)
	}
	for _, s := range systemWrite {
		add(s, true, false)
	}
	for _, s := range programTree(path, home) {
		add(s, false, false)
	}
	if home != "" {
		for _, c := range cacheDirs {
			add(filepath.Join(home, c), true, false)
		}
	}
	for _, r := range p.Read {
		if err := add(r, false, true); err != nil {
			return nil, err
		}
	}
	for _, w := range p.Write {
		if err := add(w, true, true); err != nil {
			return nil, err
		}
	}
	if err := add(p.Private, true, true); err != nil {
		return nil, err
	}
	return out, nil
}

// programTree is what running path needs beyond the system: the executable
// (through its symlinks), its script interpreter, and the package tree it
// lives in — the outermost node_modules folder of a Node.js package, the
// virtual environment of a Python one, else the executable's own folder.
func programTree(path, home string) []string {
	var out []string
	for _, p := range []string{path, interpreter(path)} {
		if p == "" {
			continue
		}
		out = append(out, p)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		out = append(out, real)
		for _, r := range []string{packageRoot(real), packageRoot(p)} {
			if !tooWide(r, home) {
				out = append(out, r)
			}
		}
	}
	return out
}

// packageRoot is the folder of the package tree that holds the file at p.
func packageRoot(p string) string {
	dir := filepath.Dir(p)
	root := dir
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		switch filepath.Base(d) {
		case "node_modules":
			root = d
		}
		if _, err := os.Stat(filepath.Join(d, "pyvenv.cfg")); err == nil {
			return d
		}
	}
	return root
}

// tooWide reports whether a package root would show more than a package:
// the home or one of its parents, the temporary folder, or the root.
func tooWide(dir, home string) bool {
	if dir == "/" || dir == os.TempDir() || dir == "/tmp" {
		return true
	}
	return home != "" && within(home, dir)
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// hiddenBy returns the hidden folder that path is in or holds, "" if none.
// The private folder may lie in a hidden one (it is under Plexus's home)
// and so may what lies under it.
func hiddenBy(hidden []string, private, path string) string {
	if private != "" && within(path, private) {
		return ""
	}
	for _, h := range hidden {
		if within(path, h) || within(h, path) {
			return h
		}
	}
	return ""
}

// interpreter is the program named by a script's "#!" line, with
// "/usr/bin/env prog" looked up on PATH; "" for other files.
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" {
		for _, a := range fields[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if p, err := exec.LookPath(a); err == nil {
				return p
			}
			return ""
		}
		return ""
	}
	return fields[0]
}
