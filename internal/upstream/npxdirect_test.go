package upstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

func TestParseNpx(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		ok   bool
		want npxCall
	}{
		{[]string{"npx", "-y", "@scope/pkg", "/srv"}, true,
			npxCall{npx: "npx", flags: []string{"--yes"}, packages: []string{"@scope/pkg"}, spec: "@scope/pkg", args: []string{"/srv"}}},
		{[]string{"/usr/bin/npx", "--yes", "pkg@1.2.3", "-v", "--", "x"}, true,
			npxCall{npx: "/usr/bin/npx", flags: []string{"--yes"}, packages: []string{"pkg@1.2.3"}, spec: "pkg@1.2.3", args: []string{"-v", "--", "x"}}},
		{[]string{"npx", "pkg"}, true, npxCall{npx: "npx", packages: []string{"pkg"}, spec: "pkg", args: []string{}}},
		{[]string{"npx", "-y", "-p", "a", "--package=b@2", "cmd", "arg"}, true,
			npxCall{npx: "npx", flags: []string{"--yes", "--package=a", "--package=b@2"}, packages: []string{"a", "b@2"}, command: "cmd", args: []string{"arg"}}},
		{[]string{"npx", "--yes=true", "--", "pkg"}, true, npxCall{npx: "npx", flags: []string{"--yes"}, packages: []string{"pkg"}, spec: "pkg", args: []string{}}},
		{[]string{"npx", "--yes=false", "pkg"}, false, npxCall{}},
		{[]string{"npx", "--no-install", "pkg"}, false, npxCall{}},
		{[]string{"npx", "--registry", "http://x", "pkg"}, false, npxCall{}},
		{[]string{"npx", "-y"}, false, npxCall{}},
		{[]string{"npx", "-p"}, false, npxCall{}},
		{[]string{"node", "server.js"}, false, npxCall{}},
		{[]string{"npx.sh", "pkg"}, false, npxCall{}},
	} {
		got, ok := parseNpx(tc.argv)
		if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("parseNpx(%q) = %+v, %v; want %+v, %v", tc.argv, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNpxBinName(t *testing.T) {
	for _, tc := range []struct{ manifest, want string }{
		{`{"name":"@s/tool","bin":"cli.js"}`, "tool"},
		{`{"name":"@s/tool","bin":{"only":"cli.js"}}`, "only"},
		{`{"name":"@s/tool","bin":{"b-alias":"cli.js","a-alias":"./cli.js"}}`, "b-alias"}, // one file, as npm normalizes bins
		{`{"name":"@s/tool","bin":{"z":"cli.js","y":"cli.js"}}`, "z"},
		{`{"name":"@s/tool","bin":{"other":"o.js","tool":"t.js"}}`, "tool"},
		{`{"name":"tool","bin":{"other":"o.js","more":"m.js"}}`, ""},
		{`{"name":"tool"}`, ""},
	} {
		got, err := npxBinName([]byte(tc.manifest))
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("npxBinName(%s) = %q, %v; want %q", tc.manifest, got, err, tc.want)
		}
	}
}

func TestRegistryName(t *testing.T) {
	for spec, want := range map[string]string{
		"@modelcontextprotocol/server-memory":        "@modelcontextprotocol/server-memory",
		"@modelcontextprotocol/server-memory@latest": "@modelcontextprotocol/server-memory",
		"pkg@^1.2":    "pkg",
		"pkg@1.2.3":   "pkg",
		"./x.tgz":     "",
		"github:a/b":  "",
		"alias@npm:x": "",
		"/abs/dir":    "",
	} {
		if got := registryName(spec); got != want {
			t.Errorf("registryName(%q) = %q, want %q", spec, got, want)
		}
	}
}

// tinyServer is a stdio MCP server in plain Node.js, without dependencies:
// enough for a handshake and a tools/list.
const tinyServer = `#!/usr/bin/env node
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "tiny", version: "1.0.0" } } });
  } else if (m.method === "tools/list") {
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "args:" + process.argv.slice(2).join(","), inputSchema: { type: "object" } }] } });
  } else {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no " + m.method } });
  }
});
`

// TestNpxDirectStartsWhatNpxRuns runs the real npx on a local package (no
// network: a tarball spec) in a cache of its own: Plexus's install step
// leaves the npx folder npx itself uses, the bin chosen is the one npx runs
// (two bins, one named as the package), the server answers, and no npm
// process is left in its place.
func TestNpxDirectStartsWhatNpxRuns(t *testing.T) {
	t.Parallel()
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npx is missing")
		}
		t.Skip("npx is missing (CI installs it)")
	}
	dir := t.TempDir()
	testenv.NPMPackage(t, filepath.Join(dir, "tiny.tgz"),
		[2]string{"package.json", `{"name":"@px/tiny","version":"1.0.0","bin":{"tiny-other":"bin/other.js","tiny":"bin/tiny.js"}}`},
		[2]string{"bin/tiny.js", tinyServer},
		[2]string{"bin/other.js", "#!/usr/bin/env node\nconsole.log('other')\n"})
	env := map[string]string{"npm_config_cache": filepath.Join(dir, "cache"), "npm_config_update_notifier": "false"}
	var installs atomic.Int32
	s := Spec{Name: "tiny", Type: "stdio", Argv: []string{npx, "-y", "./tiny.tgz", "a", "b c"}, Dir: dir, Env: env, NpxDirect: true, StartupTimeout: 60 * time.Second,
		OnInstalling: func() { installs.Add(1) }}

	if npxShadowed("./tiny.tgz", dir, os.Getenv("PATH"), env) {
		t.Fatal("the spec counts as shadowed in a folder with no project")
	}
	ctx := context.Background()
	c, err := Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := installs.Load(); n != 1 {
		t.Errorf("the first start, into an empty cache, said %d times that it installs, not once", n)
	}
	if got := c.Discovery().Tools; len(got) != 1 || !strings.Contains(string(got[0]), `"name":"args:a,b c"`) {
		t.Fatalf("tools of the direct start: %+v", got)
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.PID()), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "cache", "_npx", npxFolderHash([]string{"./tiny.tgz"}))
	wantBin := filepath.Join(folder, "node_modules", ".bin", "tiny")
	// The bin's #!/usr/bin/env node makes it node BIN ARGS, as under npx.
	if got := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"); len(got) != 4 || filepath.Base(got[0]) != "node" || !reflect.DeepEqual(got[1:], []string{wantBin, "a", "b c"}) {
		t.Errorf("the server runs as %q, not as node %s a 'b c'", got, wantBin)
	}
	if testing.Short() {
		return
	}
	// A second start finds the package in the npx folder: no install.
	c2, err := Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
	if n := installs.Load(); n != 1 {
		t.Errorf("a start from the filled cache counts as installing (%d)", n)
	}
	// What npx itself runs for the same command line, in the same cache.
	cmd := exec.Command(npx, "-y", "./tiny.tgz", "x")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+env["npm_config_cache"])
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	b, err := cmd.Output()
	if err != nil || !strings.Contains(string(b), `"args:x"`) {
		t.Fatalf("npx itself: %v\n%s", err, b)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "cache", "_npx"))
	if len(entries) != 1 || entries[0].Name() != filepath.Base(folder) {
		t.Errorf("npx folders after npx's own run: %v (want only %s)", entries, filepath.Base(folder))
	}
}

// TestNpxShadowed: a bin of the spec's name that npx finds before its npx
// folder (a project's node_modules/.bin, a package.json's bins, from the
// working folder up) keeps the server on npx.
func TestNpxShadowed(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is missing")
	}
	path := os.Getenv("PATH")
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if npxShadowed("some-server", dir, path, nil) {
		t.Fatal("shadowed with nothing around")
	}
	if !npxShadowed("some-server", dir, path, map[string]string{"npm_config_prefix": "/opt/npm"}) {
		t.Error("not shadowed with a global prefix of its own")
	}
	if err := os.WriteFile(filepath.Join(root, "a", "package.json"), []byte(`{"bin":{"some-server":"x.js"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !npxShadowed("some-server", dir, path, nil) {
		t.Error("not shadowed by a package.json's bin above the folder")
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "other"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if !npxShadowed("other", dir, path, nil) {
		t.Error("not shadowed by node_modules/.bin")
	}
}

// TestNpxWillInstall: a start installs when the npx folder of the spec, in
// the cache npm uses, lacks the package; an npmrc that sets the cache
// leaves it unknown, which is no.
func TestNpxWillInstall(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	spec := "@scope/server@1.2.3"
	if !npxWillInstall(spec, dir, "", env) {
		t.Error("an empty default cache: not installing")
	}
	pkg := filepath.Join(home, ".npm", "_npx", npxFolderHash([]string{spec}), "node_modules", "@scope", "server")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if !npxWillInstall(spec, dir, "", env) {
		t.Error("a folder without its package.json: not installing")
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if npxWillInstall(spec, dir, "", env) {
		t.Error("the package is in its npx folder: installing")
	}
	if !npxWillInstall(spec, dir, "", map[string]string{"HOME": home, "NPM_CONFIG_CACHE": filepath.Join(home, "other")}) {
		t.Error("a cache of its own, empty: not installing")
	}
	if err := os.WriteFile(filepath.Join(dir, ".npmrc"), []byte("registry=https://r.example/\n cache = /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if npxWillInstall("other-server", dir, "", env) {
		t.Error("an npmrc sets the cache, yet the start counts as installing")
	}
}
