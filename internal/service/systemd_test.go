package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// noUserSystemd points systemctl --user at a runtime folder where no user
// instance listens, as in a container or an SSH session without logind.
func noUserSystemd(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(dir, "bus"))
}

// TestSystemdInstallWithoutAUserInstance runs the real systemctl: with no
// user instance the unit is written all the same, and the answer says what
// is missing and the commands to run; uninstall then removes it.
func TestSystemdInstallWithoutAUserInstance(t *testing.T) {
	if _, err := exec.LookPath("systemctl"); err != nil {
		t.Skip("systemctl is not installed: the no-instance path is the one tested here")
	}
	noUserSystemd(t)
	home := t.TempDir()
	m, err := For("linux", home, filepath.Join(home, ".config"))
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Exe: "/usr/local/bin/plexus", Home: filepath.Join(home, ".plexus"), User: "ann", UserHome: home}
	r, err := m.Install(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	unitPath := filepath.Join(home, ".config", "systemd", "user", "plexus.service")
	if r.Path != unitPath || r.Started {
		t.Errorf("result %+v: want the unit at %s, not started", r, unitPath)
	}
	got, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := SystemdUnit(s)
	if string(got) != want {
		t.Errorf("unit on disk:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(r.Message, "no systemd user instance runs here") || !strings.Contains(r.Message, "plexus daemon") {
		t.Errorf("message %q does not say what is missing and what to do", r.Message)
	}
	if len(r.Todo) != 2 || r.Todo[1] != "systemctl --user enable --now plexus.service" {
		t.Errorf("todo %q: want the daemon-reload and enable commands", r.Todo)
	}

	st, err := m.Status(t.Context())
	if err != nil || !st.Installed || st.State != "" || !strings.Contains(st.Message, "no systemd user instance") {
		t.Errorf("status %+v, %v: want installed, no state, no instance", st, err)
	}

	r, err = m.Uninstall(t.Context())
	if err != nil || r.Started {
		t.Fatalf("uninstall %+v, %v", r, err)
	}
	if _, err := os.Stat(unitPath); !os.IsNotExist(err) {
		t.Errorf("the unit is still there after uninstall: %v", err)
	}
	if st, _ := m.Status(t.Context()); st.Installed {
		t.Errorf("status after uninstall: %+v", st)
	}
	if r, _ := m.Uninstall(t.Context()); !strings.Contains(r.Message, "nothing to remove") {
		t.Errorf("second uninstall: %+v", r)
	}
}

// TestSystemdInstallRefusesABadSpecAndWritesNothing: bad input loses
// nothing and leaves no half-written unit.
func TestSystemdInstallRefusesABadSpecAndWritesNothing(t *testing.T) {
	home := t.TempDir()
	m, _ := For("linux", home, filepath.Join(home, ".config"))
	if _, err := m.Install(t.Context(), Spec{Exe: "/bin/plexus", Home: "/h\nExecStartPre=/bin/false"}); err == nil {
		t.Fatal("a home with a line break was accepted")
	}
	if _, err := os.Stat(filepath.Join(home, ".config")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

// TestSystemdAcceptsTheUnit has systemd's own parser check the unit, where
// systemd-analyze is installed.
func TestSystemdAcceptsTheUnit(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit, err := SystemdUnit(Spec{Exe: exe, Home: "/home/ann/.plexus 100% \"mine\""})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "plexus.service")
	if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", p).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
