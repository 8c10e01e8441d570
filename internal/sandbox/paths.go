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

// systemWrite are the device files every program may write, and the
// sandbox's own /dev/shm (arrangeMounts). Not /dev/tty: a server talks
// through its pipes, and the daemon's terminal, if it has one, is the
// user's.
var systemWrite = []string{"/dev/null", "/dev/shm"}

// homeRead are what the package managers read under the home besides
// their caches (which are overlays in the private folder, arrangeMounts):
// uv's Python installations and tools. Read only: a sandboxed server never
// writes where a program outside runs from.
var homeRead = []string{".local/share/uv"}

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
		if s := secretAt(p.Secrets, path); s != "" {
			if must {
				return fmt.Errorf("%s is %s, a secret of the daemon's that a sandboxed server never reads", path, s)
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
	for _, s := range programTree(path, home, os.Getenv) {
		add(s, false, false)
	}
	if home != "" {
		for _, c := range homeRead {
			add(filepath.Join(home, c), false, false)
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
// virtual environment of a Python one, else the executable's own folder —
// and, for one a version manager installed under the home (pyenv, nvm,
// asdf, …), the manager's whole folder, with the files that pick a version.
func programTree(path, home string, getenv func(string) string) []string {
	var out []string
	roots := managerRoots(home, getenv)
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
		for _, r := range roots {
			if within(p, r.dir) || within(real, r.dir) {
				out = append(out, r.dir)
				for _, f := range r.pick {
					if home != "" {
						out = append(out, filepath.Join(home, f))
					}
				}
			}
		}
	}
	return out
}

// A manager is a version manager's folder and the files in the home that
// pick a version for it.
type manager struct {
	dir  string
	pick []string
}

// managers are the version managers whose programs live under the home:
// the folder's variable, its default under the home, and the version files
// its shims read there. The whole folder is read-only to the server: the
// shims run the manager's scripts, which read its settings and versions.
// Cargo's own folder holds crates.io's token, so only its bin is listed.
var managers = []struct {
	env, dir string
	pick     []string
}{
	{"PYENV_ROOT", ".pyenv", []string{".python-version"}},
	{"NVM_DIR", ".nvm", []string{".nvmrc"}},
	{"ASDF_DATA_DIR", ".asdf", []string{".tool-versions"}},
	{"", ".local/share/mise", []string{".tool-versions"}},
	{"VOLTA_HOME", ".volta", nil},
	{"FNM_DIR", ".local/share/fnm", []string{".node-version", ".nvmrc"}},
	{"", ".fnm", []string{".node-version", ".nvmrc"}},
	{"NODENV_ROOT", ".nodenv", []string{".node-version"}},
	{"RBENV_ROOT", ".rbenv", []string{".ruby-version"}},
	{"GOENV_ROOT", ".goenv", []string{".go-version"}},
	{"BUN_INSTALL", ".bun", nil},
	{"DENO_INSTALL", ".deno", nil},
	{"SDKMAN_DIR", ".sdkman", nil},
	{"", ".rustup", nil},
	{"", ".cargo/bin", nil},
	{"", ".local/pipx", nil},
}

// managerRoots are the managers' folders: the variable's, else the home's.
func managerRoots(home string, getenv func(string) string) []manager {
	var out []manager
	for _, m := range managers {
		dir := ""
		if m.env != "" {
			dir = getenv(m.env)
		}
		if dir == "" && home != "" {
			dir = filepath.Join(home, m.dir)
		}
		if dir == "" || !filepath.IsAbs(dir) || tooWide(dir, home) {
			continue
		}
		out = append(out, manager{dir: filepath.Clean(dir), pick: m.pick})
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
// What lies in the private folder is never hidden (the private folder is
// kept outside Plexus's home, and a policy that put it inside is refused
// by the daemon).
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

// secretAt returns the secret that path is or lies in, "" if none. A
// folder that holds a secret is not one: the secret is covered in it
// (arrangeMounts).
func secretAt(secrets []string, path string) string {
	for _, s := range secrets {
		if within(path, s) {
			return s
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
