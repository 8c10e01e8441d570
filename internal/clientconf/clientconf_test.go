package clientconf

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// canary marks the planted secrets of the fixtures.
var canary = regexp.MustCompile(`[A-Za-z_-]*CANARY[A-Za-z0-9]*`)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testCommand is the command the fixtures register, with characters that
// need quoting in every format.
const testCommand = `/opt/my tools/plexus "v2"`

// TestRoundTrip: for every client, connecting its fixture gives the golden
// file (the user's entries, comments and formatting kept, every canary
// secret still in place); connecting again changes nothing; disconnecting
// gives the fixture back byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, name := range Clients() {
		t.Run(name, func(t *testing.T) {
			before, err := os.ReadFile(filepath.Join("testdata", name+".before"))
			if err != nil {
				t.Fatal(err)
			}
			connected, err := Edit(name, before, testCommand, true)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".connected.golden")
			if *update {
				if err := os.WriteFile(golden, connected, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(connected) != string(want) {
				t.Errorf("connected:\n%s\nwant:\n%s", connected, want)
			}
			canaries := canary.FindAllString(string(before), -1)
			if len(canaries) == 0 {
				t.Fatal("the fixture has no canary")
			}
			for _, c := range canaries {
				if !strings.Contains(string(connected), c) {
					t.Errorf("connecting lost %q", c)
				}
			}
			again, err := Edit(name, connected, testCommand, true)
			if err != nil || string(again) != string(connected) {
				t.Errorf("connecting twice: %v\n%s", err, again)
			}
			back, err := Edit(name, connected, testCommand, false)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != string(before) {
				t.Errorf("disconnected:\n%s\nwant the fixture:\n%s", back, before)
			}
			// A file that does not exist yet: made, then emptied of Plexus.
			fresh, err := Edit(name, nil, "plexus", true)
			if err != nil || !strings.Contains(string(fresh), "plexus") {
				t.Fatalf("a new file: %v\n%s", err, fresh)
			}
			if _, err := Edit(name, fresh, "plexus", false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReplacesOldEntry: an entry from before with another command is
// replaced, not doubled.
func TestReplacesOldEntry(t *testing.T) {
	for _, name := range Clients() {
		before, _ := os.ReadFile(filepath.Join("testdata", name+".before"))
		old, err := Edit(name, before, "/old/plexus", true)
		if err != nil {
			t.Fatal(err)
		}
		now, err := Edit(name, old, "/new/plexus", true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(string(now), "/old/plexus") || strings.Count(string(now), "/new/plexus") != 1 {
			t.Errorf("%s: replacing the entry:\n%s", name, now)
		}
	}
}

// TestRefusesBrokenFiles: a file the client could not read either is left
// alone with an error that says where.
func TestRefusesBrokenFiles(t *testing.T) {
	for name, src := range map[string]string{
		"claude":   `{"mcpServers": {"a": 1,}`,
		"cursor":   `{"mcpServers": // comment` + "\n" + `{}}`,
		"vscode":   `{"servers": [1, 2]}`,
		"zed":      `{"context_servers": {"a": /* open`,
		"codex":    "[mcp_servers.plexus\ncommand = 1\n",
		"goose":    "extensions: [a, b\n",
		"gemini":   `{"mcpServers": {"x": 1, "x": 2}}`,
		"opencode": `["not an object"]`,
	} {
		if out, err := Edit(name, []byte(src), "plexus", true); err == nil {
			t.Errorf("%s: %q was edited into %q", name, src, out)
		}
	}
}

// TestWriteKeepsBackup: Write keeps the file as it was beside it, keeps
// its mode, follows a link to the file it points at and leaves no
// temporary file.
func TestWriteKeepsBackup(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "dotfiles", "claude.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile("testdata/claude.before")
	if err := os.WriteFile(real, before, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(home, ".claude.json")); err != nil {
		t.Fatal(err)
	}
	o := Options{Home: home, Command: "plexus"}
	p, err := Prepare("claude", o, true)
	if err != nil || !p.Changed || p.Path != real {
		t.Fatalf("%+v %v", p, err)
	}
	if d := p.Diff(); !strings.Contains(d, `+    "plexus": {`) || !strings.Contains(d, "--- "+real) {
		t.Errorf("diff:\n%s", d)
	}
	backup, err := p.Write(time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(backup); string(b) != string(before) {
		t.Errorf("backup %s: %q", backup, b)
	}
	if fi, err := os.Lstat(filepath.Join(home, ".claude.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	if m, _ := filepath.Glob(filepath.Join(home, "dotfiles", ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	connected, _ := os.ReadFile(real)
	// Disconnecting in the same second of the clock: its backup (the
	// connected file) is a second one, and the first, the file as the user
	// had it, is still there.
	p, err = Prepare("claude", o, false)
	if err != nil || !p.Changed {
		t.Fatal(p, err)
	}
	second, err := p.Write(time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != string(before) {
		t.Errorf("after disconnect:\n%s", b)
	}
	if second == backup {
		t.Fatalf("the second backup took the first one's name %s", backup)
	}
	if b, _ := os.ReadFile(backup); string(b) != string(before) {
		t.Errorf("the first backup after a second edit in the same second: %q", b)
	}
	if b, _ := os.ReadFile(second); string(b) != string(connected) {
		t.Errorf("the second backup %s: %q", second, b)
	}
}

// TestPathsPerSystem: the user files that live elsewhere on macOS and
// Windows. Separators are compared as slashes: the test runs on Linux,
// where filepath.Join of a Windows path uses them.
func TestPathsPerSystem(t *testing.T) {
	for _, tc := range []struct{ goos, client, want string }{
		{"linux", "claude-desktop", "/h/.config/Claude/claude_desktop_config.json"},
		{"linux", "vscode", "/h/.config/Code/User/mcp.json"},
		{"darwin", "claude-desktop", "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"darwin", "vscode", "/h/Library/Application Support/Code/User/mcp.json"},
		{"darwin", "zed", "/h/.config/zed/settings.json"},
		{"darwin", "claude", "/h/.claude.json"},
		{"windows", "claude-desktop", "C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json"},
		{"windows", "vscode", "C:/Users/me/AppData/Roaming/Code/User/mcp.json"},
		{"windows", "zed", "C:/Users/me/AppData/Roaming/Zed/settings.json"},
		{"windows", "goose", "C:/Users/me/AppData/Roaming/Block/goose/config/config.yaml"},
		{"windows", "cursor", "C:/Users/me/.cursor/mcp.json"},
		{"windows", "claude", "C:/Users/me/.claude.json"},
		{"freebsd", "claude-desktop", "/h/.config/Claude/claude_desktop_config.json"},
	} {
		home, env := "/h", map[string]string{}
		if tc.goos == "windows" {
			home, env = `C:\Users\me`, map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}
		}
		o := Options{Home: home, GOOS: tc.goos, Getenv: func(k string) string { return env[k] }}
		got, err := Path(tc.client, o)
		if got = strings.ReplaceAll(got, `\`, "/"); err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.goos, tc.client, got, err, tc.want)
		}
	}
	// Without APPDATA, the roaming folder under the profile.
	got, _ := Path("claude-desktop", Options{Home: `C:\Users\me`, GOOS: "windows"})
	if want := "C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json"; strings.ReplaceAll(got, `\`, "/") != want {
		t.Errorf("no APPDATA: %q, want %q", got, want)
	}
}

// TestPaths: each client's file, in each scope, honouring the variables
// that move them.
func TestPaths(t *testing.T) {
	env := map[string]string{"CODEX_HOME": "/c", "XDG_CONFIG_HOME": "/x"}
	o := Options{Home: "/h", Dir: "/p", GOOS: "linux", Getenv: func(k string) string { return env[k] }}
	for _, tc := range []struct{ client, scope, want string }{
		{"claude", "", "/h/.claude.json"},
		{"claude", ScopeProject, "/p/.mcp.json"},
		{"claude-desktop", "", "/x/Claude/claude_desktop_config.json"},
		{"codex", "", "/c/config.toml"},
		{"gemini", "", "/h/.gemini/settings.json"},
		{"goose", "", "/x/goose/config.yaml"},
		{"vscode", ScopeProject, "/p/.vscode/mcp.json"},
		{"zed", "", "/x/zed/settings.json"},
	} {
		o.Scope = tc.scope
		if got, err := Path(tc.client, o); err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.client, tc.scope, got, err, tc.want)
		}
	}
	o.Scope = ScopeProject
	if _, err := Path("windsurf", o); err == nil {
		t.Error("windsurf has a project scope")
	}
	if _, err := Path("notepad", o); err == nil || !strings.Contains(err.Error(), "claude") {
		t.Errorf("unknown client: %v", err)
	}
}

// TestLaunchEntry: a Plexus on another home and port is what every
// client's entry starts — PLEXUS_HOME in its environment, --listen in its
// arguments — and disconnecting gives the fixture back byte for byte.
func TestLaunchEntry(t *testing.T) {
	l := Launch{Home: `/srv/plexus "home"`, Listen: "127.0.0.1:7790"}
	for _, name := range Clients() {
		before, err := os.ReadFile(filepath.Join("testdata", name+".before"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := EditLaunch(name, before, testCommand, l, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := clients[name]
		doc, err := decode(c.format, out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		entry := fmt.Sprint(pluck(doc, c.serverKeys()))
		for _, want := range []string{"PLEXUS_HOME", l.Home, "--listen", l.Listen, testCommand} {
			if !strings.Contains(entry, want) {
				t.Errorf("%s: the entry lacks %q: %s", name, want, entry)
			}
		}
		back, err := EditLaunch(name, out, testCommand, l, false)
		if err != nil || string(back) != string(before) {
			t.Errorf("%s: disconnect: %v\n%s", name, err, back)
		}
	}
}

// TestMaskDiff: a diff shows keys and Plexus's own entry, never the
// values of the user's other entries or their comments.
func TestMaskDiff(t *testing.T) {
	diff := `--- a
+++ a
@@ -1,3 +1,4 @@
 {"mcpServers": {
-  "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_canary"}} // my pat ghp_canary
+  "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_canary"}},
+  "plexus": {"command": "/usr/bin/plexus", "args": ["mcp"]}
 }}
 token = ghp_canary
`
	got := MaskDiff(diff, "/usr/bin/plexus")
	if strings.Contains(got, "ghp_canary") || strings.Contains(got, "my pat") {
		t.Errorf("a value shows:\n%s", got)
	}
	for _, want := range []string{`"plexus": {"command": "/usr/bin/plexus", "args": ["mcp"]}`, `"GITHUB_TOKEN": "…"`, "// …", "token = …"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
}
