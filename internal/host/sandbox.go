package host

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/sandbox"
)

// sandboxOf is the sandbox a stdio server runs in: its own, or on a team's
// replica (Options.SandboxByDefault, given as sandboxByDefault) the strict
// preset when its settings have none (byDefault); nil for none, and for
// "sandbox": false.
//
// A replica holds the team's secrets — the store's key opens every
// member's token — and every stdio server runs as its user, so there a
// server is confined unless a person said otherwise. Off Linux, where
// Plexus confines nothing, the default does not apply (docs/team.md).
func sandboxOf(sc config.Server, sandboxByDefault bool) (sb *config.Sandbox, byDefault bool) {
	switch {
	case sc.Type != config.TypeStdio:
		return nil, false
	case sc.Sandbox.Confines():
		return sc.Sandbox, false
	case sc.Sandbox == nil && sandboxByDefault && runtime.GOOS == "linux":
		return config.StrictSandbox(), true
	}
	return nil, false
}

// sandboxPolicy turns a server's sandbox settings into the launcher's
// policy: "~" expanded with the daemon's home, the private folder beside
// Plexus's home (privateFolder), Plexus's home hidden and the daemon's
// secret files covered. A listed folder or a working directory (cwd, ""
// for none) that would show Plexus's home, and a listed secret, are
// errors, not a silent narrowing.
func sandboxPolicy(name string, sb config.Sandbox, plexusHome, cwd string, secrets []string) (*sandbox.Policy, error) {
	home, _ := os.UserHomeDir()
	absHome, err := filepath.Abs(plexusHome)
	if err != nil {
		return nil, err
	}
	p := &sandbox.Policy{
		Server:   name,
		Private:  privateFolder(absHome, name),
		Previous: filepath.Join(absHome, "sandbox", name),
		Hidden:   []string{absHome},
		Secrets:  secrets,
		Network:  sandbox.Network{Mode: sandbox.NetworkList},
		Limits:   sandbox.DefaultLimits,
	}
	if cwd != "" {
		dir, err := filepath.Abs(cwd)
		if err != nil {
			return nil, fmt.Errorf("cwd: %w", err)
		}
		if inside(dir, absHome) || inside(absHome, dir) {
			return nil, fmt.Errorf("cwd: %s would show Plexus's home (%s), which a sandboxed server never sees", dir, absHome)
		}
		p.Dir = dir
	}
	expand := func(key string, paths []string) ([]string, error) {
		var out []string
		for i, path := range paths {
			if path == "~" || strings.HasPrefix(path, "~/") {
				if home == "" {
					return nil, fmt.Errorf("filesystem.%s[%d]: %q needs a home folder, and HOME is not set", key, i, path)
				}
				path = filepath.Join(home, strings.TrimPrefix(path, "~"))
			}
			path = filepath.Clean(path)
			if inside(path, absHome) || inside(absHome, path) {
				return nil, fmt.Errorf("filesystem.%s[%d]: %s would show Plexus's home (%s), which a sandboxed server never sees", key, i, path, absHome)
			}
			for _, s := range secrets {
				if inside(path, s) {
					return nil, fmt.Errorf("filesystem.%s[%d]: %s is a secret of the daemon's (its store key or URL), which a sandboxed server never reads", key, i, path)
				}
			}
			out = append(out, path)
		}
		return out, nil
	}
	if p.Read, err = expand("read", sb.Filesystem.Read); err != nil {
		return nil, err
	}
	if p.Write, err = expand("write", sb.Filesystem.Write); err != nil {
		return nil, err
	}
	if l := sb.Limits; l != nil {
		if l.MemoryMb > 0 {
			p.Limits.MemoryBytes = uint64(l.MemoryMb) << 20
		}
		if l.Processes > 0 {
			p.Limits.Processes = uint64(l.Processes)
		}
		if l.OpenFiles > 0 {
			p.Limits.OpenFiles = uint64(l.OpenFiles)
		}
	}
	switch sb.Network.Mode {
	case config.SandboxNetworkNone:
		p.Network.Mode = sandbox.NetworkNone
	case config.SandboxNetworkAll:
		p.Network.Mode = sandbox.NetworkAll
	default:
		for _, hp := range sb.Network.Allow {
			h, port, err := config.ParseHostPort(hp)
			if err != nil {
				return nil, fmt.Errorf("network: %w", err)
			}
			p.Network.Allow = append(p.Network.Allow, sandbox.HostPort{Host: h, Port: port})
		}
	}
	return p, nil
}

// privateFolder is a sandboxed server's own folder: beside Plexus's home,
// never in it (~/.plexus-sandbox/NAME for ~/.plexus), so that nothing of
// Plexus's — its socket above all — is a relative path away from where the
// server runs.
func privateFolder(plexusHome, name string) string {
	return filepath.Join(filepath.Dir(plexusHome), filepath.Base(plexusHome)+"-sandbox", name)
}

// sandboxRefusal refuses, on a system whose kernel Plexus cannot confine a
// server with (all but Linux: see docs/platforms.md), to add a server with
// a sandbox: the error says so when the user asks for it, not at each start.
// A sandboxed server in a settings file copied from Linux still loads; its
// start fails, saying why.
func sandboxRefusal(goos, name string, sc config.Server) error {
	if goos == "linux" || !sc.Sandbox.Confines() {
		return nil
	}
	return &config.Error{Problems: []config.Problem{{
		Path:    config.KeyPath(config.KeyPath("mcp.servers", name), "sandbox"),
		Message: "Plexus sandboxes a server only on Linux (Landlock, namespaces and seccomp); on " + goos + " it cannot confine one: add it without --sandbox if you trust it (docs/platforms.md)",
	}}}
}

// inside reports whether path is dir or under it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
