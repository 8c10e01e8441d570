package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMissing(t *testing.T) {
	full := Features{OS: "linux", LandlockABI: 7, Namespaces: true, Seccomp: true}
	none := &Policy{Network: Network{Mode: NetworkNone}}
	list := &Policy{Network: Network{Mode: NetworkList, Allow: []HostPort{{"h", 1}}}}
	if m := list.Missing(full); len(m) != 0 {
		t.Errorf("full features: %v", m)
	}
	for _, tc := range []struct {
		p    *Policy
		f    Features
		want string
	}{
		{none, Features{OS: "darwin"}, "need Linux"},
		{none, Features{OS: "linux", Namespaces: true, Seccomp: true}, "Landlock is not available"},
		{list, Features{OS: "linux", LandlockABI: 7, Seccomp: true, NamespacesError: "operation not permitted"}, "a host:port list is enforced by a network namespace whose only way out is Plexus's proxy"},
		{none, Features{OS: "linux", LandlockABI: 7, Seccomp: true, NamespacesError: "operation not permitted"}, "user namespaces cannot be created (they hold the server's own process count, PID and network namespace): operation not permitted"},
		{none, Features{OS: "linux", LandlockABI: 7, Namespaces: true}, "seccomp"},
	} {
		m := strings.Join(tc.p.Missing(tc.f), "; ")
		if !strings.Contains(m, tc.want) {
			t.Errorf("%+v: missing %q, want …%s…", tc.f, m, tc.want)
		}
	}
	// The network namespace holds both without Landlock's TCP rules.
	for _, p := range []*Policy{none, list} {
		if m := p.Missing(Features{OS: "linux", LandlockABI: 3, Namespaces: true, Seccomp: true}); len(m) != 0 {
			t.Errorf("network %s needs no TCP rules: %v", p.Network.Mode, m)
		}
	}
}

func TestExplain(t *testing.T) {
	p := &Policy{Network: Network{Mode: NetworkNone}}
	for _, tc := range []struct{ line, want string }{
		{"Error: EACCES: permission denied, open '/root/.ssh/id_rsa'", "sandbox: denied access to /root/.ssh/id_rsa (not in the sandbox's folders; --allow-read /root/.ssh/id_rsa allows it)"},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/.aws/credentials'", "sandbox: denied access to /home/u/.aws/credentials (not in the sandbox's folders; --allow-read /home/u/.aws/credentials allows it)"},
		{"cat: /etc/shadow: Permission denied", "sandbox: denied access to /etc/shadow (not in the sandbox's folders; --allow-read /etc/shadow allows it)"},
		{"Error: connect EACCES 1.2.3.4:443 - Local (0.0.0.0:0)", "sandbox: denied connection to 1.2.3.4:443 (network: none; --allow-net 1.2.3.4:443 allows it, through Plexus's proxy)"},
		{"getaddrinfo EAI_AGAIN api.github.com", "sandbox: denied resolving api.github.com (network: none; --allow-net api.github.com:PORT allows it, through Plexus's proxy)"},
		{"Error: connect EPERM /var/run/docker.sock", "sandbox: denied the unix socket /var/run/docker.sock (a sandboxed server reaches no unix socket; only without --sandbox would it)"},
		{"dial unix /run/user/0/bus: socket: operation not permitted", "sandbox: denied the unix socket /run/user/0/bus (a sandboxed server reaches no unix socket; only without --sandbox would it)"},
		{"npm error request to https://registry.npmjs.org/@modelcontextprotocol%2fserver-everything failed: cache mode is 'only-if-cached' but no cached response is available.",
			"sandbox: the package manager cannot fetch from registry.npmjs.org:443 (network: none, so it runs from the user's cache, which does not hold the package; --allow-net registry.npmjs.org:443 allows it, through Plexus's proxy)"},
		{"error: Network connectivity is disabled, but the requested data wasn't found in the cache for: `https://pypi.org/simple/mcp-server-time/`",
			"sandbox: the package manager cannot fetch from pypi.org:443 (network: none, so it runs from the user's cache, which does not hold the package; --allow-net pypi.org:443 allows it, through Plexus's proxy)"},
		{"listening on stdio", ""},
		{"sandbox: denied access to /x (not in the sandbox's folders)", ""},
	} {
		if got := p.Explain(tc.line); got != tc.want {
			t.Errorf("Explain(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// A team replica's default sandbox, which no --sandbox asked for, says
// how its settings opt the server out, and so does the advice after a
// start it stopped.
func TestExplainDefaultSandbox(t *testing.T) {
	p := &Policy{Network: Network{Mode: NetworkNone}, Default: true}
	line := p.Explain("Error: connect EPERM /var/run/docker.sock")
	if want := `sandbox: denied the unix socket /var/run/docker.sock (a sandboxed server reaches no unix socket; only "sandbox": false in its settings would let it, as a team's replica sandboxes every stdio server by default)`; line != want {
		t.Errorf("Explain = %q, want %q", line, want)
	}
	if got := Remedy("fs", []string{line}); !strings.Contains(got, `set "sandbox": false in its settings`) || strings.Contains(got, "--sandbox") {
		t.Errorf("Remedy = %q", got)
	}
}

func TestExplainHostList(t *testing.T) {
	p := &Policy{Network: Network{Mode: NetworkList, Allow: []HostPort{{"api.github.com", 443}}}}
	got := p.Explain("Error: connect EACCES 140.82.112.6:443")
	want := "sandbox: denied connection to 140.82.112.6:443 (allowed: api.github.com:443, only through the sandbox's proxy, $HTTPS_PROXY; --allow-net 140.82.112.6:443 allows it, through Plexus's proxy)"
	if got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	// npm's offline cache miss is network none's: with a list npm asks the
	// proxy, whose own line says what it refused.
	if got := p.Explain("npm error request to https://registry.npmjs.org/x failed: cache mode is 'only-if-cached' but no cached response is available."); got != "" {
		t.Errorf("a host list explained npm's offline miss: %q", got)
	}
}

// A server that could not start is told the flag that would have allowed
// what the sandbox refused last.
func TestRemedy(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"npm error code E403", deniedConnect("sandbox: denied connect to registry.npmjs.org:443"), "npm error 403 Forbidden"},
			"the sandbox refused it (`plexus logs fs` shows the line): give it `--allow-net registry.npmjs.org:443`, on `plexus add` or with `plexus edit fs --allow-net registry.npmjs.org:443` once saved"},
		{[]string{"sandbox: denied access to /a (not in the sandbox's folders; --allow-read /a allows it)", "sandbox: denied access to /b (not in the sandbox's folders; --allow-read /b allows it)"},
			"the sandbox refused it (`plexus logs fs` shows the line): give it `--allow-read /b`, on `plexus add` or with `plexus edit fs --allow-read /b` once saved"},
		{[]string{"sandbox: denied the unix socket /s (a sandboxed server reaches no unix socket; only without --sandbox would it)"},
			"the sandbox refused a unix socket, which no sandboxed server reaches: add the server without --sandbox if you trust it"},
		{[]string{"Error: cannot find module", "the server wrote --allow-net x:1 allows it"}, ""},
		{nil, ""},
	} {
		if got := Remedy("fs", tc.lines); got != tc.want {
			t.Errorf("Remedy(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func FuzzExplain(f *testing.F) {
	for _, s := range []string{"EACCES: permission denied, open '/a'", "connect EACCES [::1]:5", "x: /y: Permission denied", "EAI_AGAIN h", "", "EPERM", "/'"} {
		f.Add(s)
	}
	p := &Policy{Network: Network{Mode: NetworkNone}}
	f.Fuzz(func(t *testing.T, line string) {
		msg := p.Explain(line)
		if msg != "" && !strings.HasPrefix(msg, "sandbox: ") {
			t.Fatalf("Explain(%q) = %q", line, msg)
		}
		if p.Explain(msg) != "" {
			t.Fatalf("Explain explains its own line %q", msg)
		}
	})
}

func TestHiddenAndTooWide(t *testing.T) {
	home := "/home/u"
	hidden := []string{"/home/u/.plexus"}
	private := "/home/u/.plexus/sandbox/fs"
	for _, tc := range []struct {
		path, want string
	}{
		{"/home/u/.plexus/creds.json", "/home/u/.plexus"},
		{"/home/u", "/home/u/.plexus"},
		{"/", "/home/u/.plexus"},
		{private + "/tmp", ""},
		{"/home/u/.plexusx", ""},
		{"/usr", ""},
	} {
		if got := hiddenBy(hidden, private, tc.path); got != tc.want {
			t.Errorf("hiddenBy(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
	for dir, want := range map[string]bool{"/": true, "/tmp": true, "/home": true, home: true, home + "/bin": false, "/opt/node": false} {
		if got := tooWide(dir, home); got != want {
			t.Errorf("tooWide(%s) = %v", dir, got)
		}
	}
}

// A listed folder that does not exist, or that would show Plexus's home,
// is an error: never a silently narrower (or wider) sandbox.
func TestFileRulesRefuse(t *testing.T) {
	dir := t.TempDir()
	plexusHome := filepath.Join(dir, "plexus")
	private := filepath.Join(plexusHome, "sandbox", "x")
	if err := os.MkdirAll(private, 0o700); err != nil {
		t.Fatal(err)
	}
	base := Policy{Private: private, Hidden: []string{plexusHome}}
	p := base
	p.Read = []string{filepath.Join(dir, "missing")}
	if _, err := fileRules(&p, "/bin/sh", ""); err == nil {
		t.Error("a missing folder was accepted")
	}
	p = base
	p.Write = []string{dir}
	if _, err := fileRules(&p, "/bin/sh", ""); err == nil || !strings.Contains(err.Error(), "never sees") {
		t.Errorf("a folder holding Plexus's home: %v", err)
	}
	p = base
	rules, err := fileRules(&p, "/bin/sh", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.path == private && !r.write {
			t.Error("the private folder is not writable")
		}
		if r.path == plexusHome {
			t.Error("Plexus's home is in the rules")
		}
	}
}

func TestMainRefusesBadPolicy(t *testing.T) {
	for _, args := range [][]string{nil, {"{}", "--", "/bin/true"}, {"not json", "--", "/bin/true"}, {`{"private":"/x","network":{"mode":"some"}}`, "--", "/bin/true"}, {`{"private":"/x","network":{"mode":"list","allow":[{"host":"h","port":1}]}}`, "--", "/bin/true"}} {
		if code := Main(args); code != 2 && code != 126 {
			t.Errorf("Main(%q) = %d, want 2 or 126", args, code)
		}
	}
}

// A program a version manager installed under the home runs with the
// manager's folder readable (its shims run its scripts, which read its
// versions) and the home's version files, and nothing else of the home.
func TestProgramTreeVersionManagers(t *testing.T) {
	home := t.TempDir()
	mk := func(rel, content string, mode os.FileMode) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shim := mk(".pyenv/shims/python3", "#!/bin/sh\nexec \"$PYENV_ROOT/libexec/pyenv\" exec python3 \"$@\"\n", 0o755)
	mk(".pyenv/versions/3.12.1/bin/python3.12", "binary", 0o755)
	nvmNode := mk(".nvm/versions/node/v22.1.0/bin/node", "binary", 0o755)
	mk(".ssh/id_rsa", "secret", 0o600)
	cargo := mk(".cargo/bin/tool", "binary", 0o755)
	mk(".cargo/credentials.toml", "token", 0o600)
	custom := t.TempDir()
	asdfTool := filepath.Join(custom, "installs", "x", "1.0", "bin", "x")
	if err := os.MkdirAll(filepath.Dir(asdfTool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(asdfTool, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASDF_DATA_DIR": custom}
	getenv := func(k string) string { return env[k] }

	for _, tc := range []struct {
		path      string
		want, not []string
	}{
		{shim, []string{filepath.Join(home, ".pyenv"), filepath.Join(home, ".python-version")}, []string{home, filepath.Join(home, ".ssh")}},
		{nvmNode, []string{filepath.Join(home, ".nvm"), filepath.Join(home, ".nvmrc")}, []string{home}},
		{cargo, []string{filepath.Join(home, ".cargo", "bin")}, []string{filepath.Join(home, ".cargo"), home}},
		{asdfTool, []string{custom, filepath.Join(home, ".tool-versions")}, []string{home}},
		{"/bin/sh", nil, []string{home, filepath.Join(home, ".pyenv")}},
	} {
		got := programTree(tc.path, home, getenv)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %s is not readable; got %q", tc.path, w, got)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: %s is readable; got %q", tc.path, n, got)
			}
		}
	}
}
