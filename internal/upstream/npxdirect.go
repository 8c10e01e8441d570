package upstream

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A server run by `npx -y PKG ARGS` costs two processes while it runs: npm's
// `npm exec` (about 80 MiB of Node.js) waits beside the server it started,
// for nothing but to pass on its exit code. Plexus asks npm itself what npx
// would run, then runs that alone:
//
//  1. npm resolves and installs, as npx would: the same npx, options,
//     packages, environment, working folder, shim and timeout, but with
//     `--call` printing the PATH npm gives the command instead of the server.
//     The package's npx folder (<cache>/_npx/<hash>) is npm's own, and so
//     is the update policy: an unversioned spec is checked against the
//     registry at every start, exactly as npx checks it. This npm exits once
//     it has printed.
//  2. Plexus starts the command npx would have run (the package's bin, or
//     the -p form's command) as found on that PATH, with that PATH, the same
//     arguments, environment and folder.
//
// Whatever does not fit — an npx option Plexus does not know, a command npx
// would find in the working folder's project or in npm's global folder, a
// PATH that does not start with the npx folder of exactly these packages, a
// package with no bin npx could choose, an npm that fails — starts the
// server through npx as configured: the direct start never fails a start
// that npx would not. A sandboxed server is always started through npx: its
// npm cache is an overlay in its own mount namespace (sandbox.Caches), which
// the daemon does not see.

// npxCall is a parsed `npx` command line.
type npxCall struct {
	npx      string   // argv[0]
	flags    []string // npx's own options, each one argument, kept for step 1
	packages []string // the -p specs; with none, the positional spec alone
	spec     string   // the positional spec when there is no -p, else ""
	command  string   // the -p form's command, else "" (the spec's bin)
	args     []string // the server's arguments
}

// parseNpx reads argv as npx (npm 7 and later) reads it, for the options a
// server's command line uses: -y/--yes, -p/--package (repeatable) and --.
// ok is false for any other option, and when there is no command.
func parseNpx(argv []string) (n npxCall, ok bool) {
	if len(argv) < 2 || filepath.Base(argv[0]) != "npx" {
		return n, false
	}
	n.npx = argv[0]
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case (key == "y" || key == "yes") && (!hasVal || val == "true"):
			n.flags = append(n.flags, "--yes")
		case key == "p" || key == "package":
			if !hasVal {
				if i+1 >= len(argv) {
					return n, false
				}
				i++
				val = argv[i]
			}
			if val == "" {
				return n, false
			}
			n.packages = append(n.packages, val)
			n.flags = append(n.flags, "--package="+val)
		default:
			return n, false
		}
	}
	if i >= len(argv) || argv[i] == "" {
		return n, false
	}
	if len(n.packages) == 0 {
		n.spec = argv[i]
		n.packages = []string{argv[i]}
	} else {
		n.command = argv[i]
	}
	n.args = slices.Clone(argv[i+1:])
	return n, true
}

// npxPathMark starts the line step 1 prints.
const npxPathMark = "plexus-npx-path="

// resolveArgv is step 1's command line: npx installs the packages into
// their npx folder, as for the server, and prints the PATH it runs with.
func (n npxCall) resolveArgv() []string {
	argv := append([]string{n.npx}, n.flags...)
	if n.spec != "" {
		argv = append(argv, "--package="+n.spec)
	}
	return append(argv, "--call", `printf '`+npxPathMark+`%s\n' "$PATH"`)
}

// npxFolderHash is the name of the npx folder of packages under
// <cache>/_npx: the first 16 hex digits of the SHA-512 of the specs,
// sorted, one a line (libnpmexec).
func npxFolderHash(packages []string) string {
	s := slices.Clone(packages)
	slices.Sort(s)
	sum := sha512.Sum512([]byte(strings.Join(s, "\n")))
	return hex.EncodeToString(sum[:])[:16]
}

// npxPrintedPATH finds the PATH step 1 printed on its stdout.
func npxPrintedPATH(out []byte) (string, bool) {
	for line := range strings.Lines(string(out)) {
		if p, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), npxPathMark); ok && p != "" {
			return p, true
		}
	}
	return "", false
}

// npxFolder is the npx folder at the head of path, if it is the one of
// exactly these packages: npm puts it first only when it installed them
// there (not when the working folder's project has them).
func npxFolder(path string, packages []string) (string, bool) {
	first, _, _ := strings.Cut(path, string(filepath.ListSeparator))
	bin := filepath.Clean(first)
	if filepath.Base(bin) != ".bin" || filepath.Base(filepath.Dir(bin)) != "node_modules" {
		return "", false
	}
	dir := filepath.Dir(filepath.Dir(bin))
	if filepath.Base(dir) != npxFolderHash(packages) || filepath.Base(filepath.Dir(dir)) != "_npx" || !filepath.IsAbs(dir) {
		return "", false
	}
	return dir, true
}

// registryName is the package name of a registry spec (name, name@version,
// name@range, name@tag, scoped or not), or "" for any other spec.
var registrySpec = regexp.MustCompile(`^((?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)(?:@[^/:\\]*)?$`)

func registryName(spec string) string {
	if m := registrySpec.FindStringSubmatch(spec); m != nil {
		return m[1]
	}
	return ""
}

// npxPackageName is the name the spec was installed under in folder: a
// registry spec's own name, or else the folder's one dependency.
func npxPackageName(folder, spec string) (string, error) {
	if name := registryName(spec); name != "" {
		return name, nil
	}
	b, err := os.ReadFile(filepath.Join(folder, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(folder, "package.json"), err)
	}
	if len(pj.Dependencies) != 1 {
		return "", fmt.Errorf("npx folder %s holds %d packages, not one", folder, len(pj.Dependencies))
	}
	for name := range pj.Dependencies {
		return name, nil
	}
	panic("unreachable")
}

// npxBinName is the bin npx runs of the package whose package.json is
// manifest (libnpmexec getBinFromManifest): its only bin (or the first of
// several names for one file), else the one named as the package without
// its scope.
func npxBinName(manifest []byte) (string, error) {
	var pj struct {
		Name string          `json:"name"`
		Bin  json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(manifest, &pj); err != nil {
		return "", err
	}
	unscoped := pj.Name
	if strings.HasPrefix(unscoped, "@") {
		_, unscoped, _ = strings.Cut(unscoped, "/")
	}
	var one string
	if json.Unmarshal(pj.Bin, &one) == nil && one != "" {
		return unscoped, nil // a string bin is named after the package
	}
	names, files, err := orderedStrings(pj.Bin)
	if err != nil || len(names) == 0 {
		return "", fmt.Errorf("package %s has no bin", pj.Name)
	}
	for i, f := range files {
		files[i] = path.Clean("/" + f) // as npm normalizes a package's bins
	}
	if len(slices.Compact(slices.Sorted(slices.Values(files)))) == 1 {
		return names[0], nil
	}
	if slices.Contains(names, unscoped) {
		return unscoped, nil
	}
	return "", fmt.Errorf("package %s has several bins and none named %s: npx cannot choose", pj.Name, unscoped)
}

// orderedStrings reads a JSON object of strings in its order.
func orderedStrings(raw json.RawMessage) (keys, vals []string, err error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, nil, err
		}
		var v string
		if err := d.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k.(string)), append(vals, v)
	}
	return keys, vals, nil
}

// lookPathIn finds name as sh does on path: the first executable file.
func lookPathIn(name, path string) (string, bool) {
	if strings.Contains(name, "/") {
		return "", false
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// nodePrefix is npm's global folder for the node found on path: the
// folder above the bin/ that holds node, its links followed.
func nodePrefix(path string) (string, bool) {
	node, ok := lookPathIn("node", path)
	if !ok {
		return "", false
	}
	real, err := filepath.EvalSymlinks(node)
	if err != nil {
		return "", false
	}
	return filepath.Dir(filepath.Dir(real)), true
}

// npxShadowed reports whether npx, given a spec and no -p, may run something
// other than the spec's npx folder: a bin of that name in a node_modules/.bin
// or a package.json's bins from dir up, or a global install beside node.
// Step 1 does not look there, so such a server is started through npx.
func npxShadowed(spec, dir, path string, env map[string]string) bool {
	for k := range env {
		if strings.EqualFold(k, "npm_config_prefix") || k == "PREFIX" {
			return true // a global folder Plexus does not work out
		}
	}
	if filepath.IsAbs(spec) { // path.resolve keeps an absolute spec as it is
		if fi, err := os.Stat(spec); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "node_modules", ".bin", spec)); err == nil && fi.Mode().IsRegular() && !filepath.IsAbs(spec) {
			return true
		}
		if b, err := os.ReadFile(filepath.Join(d, "package.json")); err == nil {
			var pj struct {
				Bin json.RawMessage `json:"bin"`
			}
			if json.Unmarshal(b, &pj) != nil {
				return true
			}
			if names, _, err := orderedStrings(pj.Bin); err == nil && slices.Contains(names, spec) {
				return true
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	prefix, ok := nodePrefix(path)
	if !ok {
		return true
	}
	if _, err := os.Stat(filepath.Join(prefix, "bin", spec)); err == nil {
		return true
	}
	if name := registryName(spec); name != "" {
		if _, err := os.Stat(filepath.Join(prefix, "lib", "node_modules", name)); err == nil {
			return true
		}
	}
	return false
}

// direct is how the server of spec s starts without npm's wrapper once
// step 1 printed path: its command and PATH, or an error saying why it
// starts through npx.
func (n npxCall) direct(s Spec, path string) (Spec, error) {
	folder, ok := npxFolder(path, n.packages)
	if !ok {
		return s, errors.New("npm did not run from the npx folder of these packages")
	}
	command := n.command
	if n.spec != "" {
		name, err := npxPackageName(folder, n.spec)
		if err != nil {
			return s, err
		}
		manifest, err := os.ReadFile(filepath.Join(folder, "node_modules", name, "package.json"))
		if err != nil {
			return s, err
		}
		if command, err = npxBinName(manifest); err != nil {
			return s, err
		}
	}
	bin, ok := lookPathIn(command, path)
	if !ok {
		return s, fmt.Errorf("%s is not on npm's PATH", command)
	}
	s.Argv = append([]string{bin}, n.args...)
	s.Env = maps.Clone(s.Env)
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	s.Env["PATH"] = path
	return s, nil
}

// npxResolve runs step 1 for the server of s, bounded by ctx, and returns
// the spec that starts it directly; ok is false (start through npx) when
// it does not apply or anything in it fails, which is logged.
func (c *Conn) npxResolve(ctx context.Context, s Spec) (Spec, bool) {
	if !s.NpxDirect || s.Sandbox != nil {
		return s, false
	}
	n, ok := parseNpx(s.Argv)
	if !ok {
		return s, false
	}
	dir := s.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	envPath := s.Env["PATH"]
	if envPath == "" {
		envPath = strings.Join(searchDirs(0), string(filepath.ListSeparator))
	}
	if n.spec != "" && npxShadowed(n.spec, dir, envPath, s.Env) {
		c.log.Debug("npx server started through npx: its command may be found outside the npx folder")
		return s, false
	}
	rs := s
	rs.Argv = n.resolveArgv()
	if s.OnInstalling != nil && n.spec != "" && npxWillInstall(n.spec, dir, envPath, s.Env) {
		s.OnInstalling()
	}
	proc, p, err := startProcess(rs, c.stderr, c.redact, c.log)
	if err != nil {
		c.log.Info("npx server started through npx: npm did not start", "err", c.redact.Error(err))
		return s, false
	}
	p.stdin.Close()
	out := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(p.stdout, 1<<20))
		io.Copy(io.Discard, p.stdout)
		p.stdout.Close()
		out <- b
	}()
	proc.watch(func(*ExitError) {})
	select {
	case <-proc.exited:
	case <-ctx.Done():
		proc.stop(s.StopGrace)
		<-out
		return s, false
	}
	<-proc.reaped
	b := <-out
	proc.stop(s.StopGrace) // closes its stderr once read
	if proc.exitErr.Code != 0 || proc.exitErr.Signal != "" {
		c.log.Info("npx server started through npx: npm's install step failed", "err", proc.exitErr)
		return s, false
	}
	path, ok := npxPrintedPATH(b)
	if !ok {
		c.log.Info("npx server started through npx: npm printed no PATH")
		return s, false
	}
	d, err := n.direct(s, path)
	if err != nil {
		c.log.Info("npx server started through npx", "reason", c.redact.Error(err))
		return s, false
	}
	c.log.Debug("npx server started without npm's wrapper", "bin", d.Argv[0])
	return d, true
}

// npxWillInstall reports whether npx certainly installs spec at this start:
// its npx folder, in the npm cache npm would use, lacks the package (for a
// spec that does not name its package, such as a tarball, lacks any). It
// says no when it cannot know: an npmrc that may set the cache (npm's own,
// the global one beside node, the user's, a project's from dir up). A
// newer version of an unversioned spec, which npx also installs, is not
// known before npm asks the registry: that start shows as starting.
func npxWillInstall(spec, dir, path string, env map[string]string) bool {
	var cache, home, userconfig string
	for k, v := range env {
		switch {
		case strings.EqualFold(k, "npm_config_cache"):
			cache = v
		case strings.EqualFold(k, "npm_config_userconfig"):
			userconfig = v
		case k == "HOME":
			home = v
		}
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if userconfig == "" {
		userconfig = filepath.Join(home, ".npmrc")
	}
	rcs := []string{userconfig}
	if prefix, ok := nodePrefix(path); ok {
		rcs = append(rcs, filepath.Join(prefix, "etc", "npmrc"), filepath.Join(prefix, "lib", "node_modules", "npm", "npmrc"))
	}
	for d := dir; ; d = filepath.Dir(d) {
		rcs = append(rcs, filepath.Join(d, ".npmrc"))
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, rc := range rcs {
		if b, err := os.ReadFile(rc); err == nil && npmrcSetsCache(b) {
			return false
		}
	}
	if cache == "" {
		if home == "" {
			return false
		}
		cache = filepath.Join(home, ".npm")
	}
	if !filepath.IsAbs(cache) {
		return false
	}
	installed := filepath.Join(cache, "_npx", npxFolderHash([]string{spec}), "node_modules")
	if name := registryName(spec); name != "" {
		installed = filepath.Join(installed, name, "package.json")
	}
	_, err := os.Stat(installed)
	return errors.Is(err, os.ErrNotExist)
}

// npmrcSetsCache reports whether an npmrc has a line for the cache key.
func npmrcSetsCache(b []byte) bool {
	for line := range strings.Lines(string(b)) {
		key, _, _ := strings.Cut(line, "=")
		if strings.TrimSpace(key) == "cache" {
			return true
		}
	}
	return false
}
