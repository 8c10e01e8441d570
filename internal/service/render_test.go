package service

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// spec has a space, a %, a $ and a quote in its paths: each file must
// carry them through its own quoting.
var spec = Spec{
	Exe:      "/home/ann/My Tools/bin/plexus",
	Home:     `/home/ann/.plexus 100% "mine" $HOME`,
	Listen:   "127.0.0.1:7790",
	User:     "ann",
	UserHome: "/home/ann",
}

var winSpec = Spec{
	Exe:      `C:\Users\Ann & Bob\go\bin\plexus.exe`,
	Home:     `C:\Users\Ann & Bob\.plexus`,
	Listen:   "[::1]:7790",
	User:     `DESKTOP-1\Ann & Bob`,
	UserHome: `C:\Users\Ann & Bob`,
}

// TestRendersMatchGoldenFiles renders each system's file; run with -update
// to accept a change after reading its diff.
func TestRendersMatchGoldenFiles(t *testing.T) {
	for _, tc := range []struct {
		golden string
		render func(Spec) (string, error)
		spec   Spec
	}{
		{"plexus.service", SystemdUnit, spec},
		{"dev.plexus.daemon.plist", LaunchdPlist, spec},
		{"plexus-task.xml", TaskXML, winSpec},
		{"plexus.rc", RCScript, spec},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := tc.render(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", tc.golden, got)
			}
		})
	}
}

func TestSystemdQuoting(t *testing.T) {
	unit, err := SystemdUnit(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ExecStart="/home/ann/My Tools/bin/plexus" daemon`,
		`Environment="PLEXUS_HOME=/home/ann/.plexus 100%% \"mine\" $HOME"`,
		"Restart=on-failure",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	unit, _ = SystemdUnit(Spec{Exe: "/opt/$x/plexus", Home: "/h"})
	if !strings.Contains(unit, `ExecStart="/opt/$$x/plexus" daemon`) {
		t.Errorf("a $ in ExecStart must be doubled:\n%s", unit)
	}
}

func TestXMLAndShellEscaping(t *testing.T) {
	x, _ := TaskXML(winSpec)
	if !strings.Contains(x, `<Command>C:\Users\Ann &amp; Bob\go\bin\plexus.exe</Command>`) || strings.Contains(x, "Ann & Bob") {
		t.Errorf("task XML does not escape &:\n%s", x)
	}
	rc, _ := RCScript(Spec{Exe: "/usr/local/bin/plexus", Home: "/home/o'neil/.plexus", User: "oneil"})
	if !strings.Contains(rc, `: ${plexus_home:='/home/o'\''neil/.plexus'}`) {
		t.Errorf("rc script does not quote the home:\n%s", rc)
	}
}

// TestBadSpecsAreRefused: a line break would end a unit line or a script
// line and start another, a command of the user's choosing.
func TestBadSpecsAreRefused(t *testing.T) {
	for _, s := range []Spec{
		{Exe: "plexus", Home: "/h"},
		{Exe: "/bin/plexus", Home: "relative"},
		{Exe: "/bin/plexus", Home: "/h\nExecStartPre=/bin/rm -rf /"},
		{Exe: "/bin/plexus\r", Home: "/h"},
	} {
		for name, render := range map[string]func(Spec) (string, error){
			"systemd": SystemdUnit, "launchd": LaunchdPlist, "task": TaskXML, "rc": RCScript,
		} {
			if out, err := render(s); err == nil {
				t.Errorf("%s rendered %+v:\n%s", name, s, out)
			}
		}
	}
	if _, err := RCScript(Spec{Exe: "/bin/plexus", Home: "/h"}); err == nil {
		t.Error("the rc script needs a user")
	}
}

func TestUTF16LE(t *testing.T) {
	if got := string(utf16LE("<é")); got != "\xff\xfe<\x00\xe9\x00" {
		t.Errorf("utf16LE = %q", got)
	}
}

func TestOnlyKnownSystemsHaveAManager(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows", "freebsd"} {
		if _, err := For(goos, "/h", "/h/.config"); err != nil {
			t.Errorf("%s: %v", goos, err)
		}
	}
	if _, err := For("plan9", "/h", "/h/.config"); err == nil || !strings.Contains(err.Error(), "plexus daemon") {
		t.Errorf("plan9: %v", err)
	}
}

// TestListenIsAnAddress: --listen reaches every file as one argument, so
// it must be HOST:PORT or off, nothing a file's quoting could be broken by.
func TestListenIsAnAddress(t *testing.T) {
	for _, bad := range []string{"127.0.0.1:7790 --store x", "a\"b", "$(id)"} {
		s := spec
		s.Listen = bad
		if _, err := SystemdUnit(s); err == nil || !strings.Contains(err.Error(), "--listen") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
