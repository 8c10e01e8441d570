package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The server's mount namespace (see Isolate) is the launcher's to arrange
// before it confines itself: the same tree as the daemon's, every path
// meaning the same, with these differences:
//
//   - /proc is mounted again for the sandbox's PID namespace: the server
//     sees its own processes only, and no command line or environment of
//     any other;
//   - /dev/shm is an empty tmpfs of its own (POSIX shared memory and
//     semaphores work, another program's segments are not there);
//   - each hidden folder (Plexus's home) is covered by an empty read-only
//     tmpfs: not even its names show;
//   - each secret file (a replica's store key and URL files) is covered by
//     /dev/null on a mount that allows no device: opening it is refused
//     (EACCES), whatever Landlock allows of the folder it is in; a secret
//     folder is covered as a hidden one is;
//   - the package caches a server runs from (npm's, uv's, pip's) are
//     overlays in its private folder: the user's cache below, read-only,
//     the server's own writes above it, kept in its private folder. npx and
//     uvx find what the user has fetched and fetch the rest, and nothing a
//     sandboxed server writes lands where a program outside runs from.
//
// The System V IPC namespace is new as well (Isolate), so that the host's
// shared memory segments, semaphores and message queues are not there.

// shmSize bounds the sandbox's /dev/shm, which RLIMIT_DATA does not count.
const shmSize = "64m"

// Cache is a package manager's cache under the home that a sandboxed server
// sees through an overlay (read-only below, its own writes above).
type Cache struct {
	Name string // the folder under the private folder's "cache"
	Home string // the user's cache, relative to the home
	Env  string // the variable that points the manager at the overlay
}

// Caches are the caches npx, uvx and pip run from.
var Caches = []Cache{
	{"npm", ".npm", "npm_config_cache"},
	{"uv", ".cache/uv", "UV_CACHE_DIR"},
	{"pip", ".cache/pip", "PIP_CACHE_DIR"},
}

// CacheDir is where cache c of the server with private folder private is.
func CacheDir(private string, c Cache) string { return filepath.Join(private, "cache", c.Name) }

// layerDir holds the overlay's upper and work folders of cache c.
func layerDir(private string, c Cache) string {
	return filepath.Join(private, ".plexus-layers", c.Name)
}

// arrangeMounts makes the server's mount namespace as described above and
// returns the variables that point the package managers at their caches.
// The launcher holds CAP_SYS_ADMIN (and CAP_DAC_OVERRIDE, which an
// overlay's upper folder needs) in the sandbox's user namespace: as uid 0
// there under a root daemon, as ambient capabilities otherwise (Isolate).
func arrangeMounts(p *Policy, home string) ([]string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("making the sandbox's mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return nil, fmt.Errorf("mounting /proc for the sandbox's PID namespace: %w (a /proc that a container runtime has partly covered cannot be mounted again in a user namespace)", err)
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size="+shmSize); err != nil {
			return nil, fmt.Errorf("mounting the sandbox's /dev/shm: %w", err)
		}
	}
	for _, h := range p.Hidden {
		if fi, err := os.Stat(h); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", h, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555,size=4k"); err != nil {
			return nil, fmt.Errorf("hiding %s: %w", h, err)
		}
	}
	for _, sec := range p.Secrets {
		if err := coverSecret(sec); err != nil {
			return nil, err
		}
	}
	var env []string
	for _, c := range Caches {
		if err := mountCache(p.Private, home, c); err != nil {
			return nil, err
		}
		env = append(env, c.Env+"="+CacheDir(p.Private, c))
	}
	return env, nil
}

// coverSecret covers the file or folder at path (see arrangeMounts); a
// path that is not there has nothing to cover.
func coverSecret(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555,size=4k"); err != nil {
			return fmt.Errorf("covering %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("covering %s: %w", path, err)
	}
	// nodev: the device cannot be opened there (Landlock would allow
	// /dev/null itself, which is writable to every server).
	if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NODEV|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("covering %s: %w", path, err)
	}
	return nil
}

// mountCache makes cache c in the private folder: an overlay on the user's
// cache when there is one, a plain folder of the server's own otherwise.
func mountCache(private, home string, c Cache) error {
	dir := CacheDir(private, c)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the sandbox's %s cache: %w", c.Name, err)
	}
	if home == "" {
		return nil
	}
	lower := filepath.Join(home, c.Home)
	if fi, err := os.Stat(lower); err != nil || !fi.IsDir() {
		return nil
	}
	layers := layerDir(private, c)
	upper, work := filepath.Join(layers, "upper"), filepath.Join(layers, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("the sandbox's %s cache: %w", c.Name, err)
		}
	}
	opts := "lowerdir=" + escapeOverlay(lower) + ",upperdir=" + escapeOverlay(upper) + ",workdir=" + escapeOverlay(work) + ",userxattr"
	err := unix.Mount("overlay", dir, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)
	if errors.Is(err, unix.EINVAL) {
		// A lower folder on a file system overlayfs cannot stack on (an
		// overlay itself, say, as in a container): its own cache instead.
		return nil
	}
	if err != nil {
		return fmt.Errorf("the sandbox's %s cache (an overlay on %s): %w", c.Name, lower, err)
	}
	return nil
}

// escapeOverlay escapes the characters overlayfs's options give a meaning.
func escapeOverlay(path string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(path)
}
