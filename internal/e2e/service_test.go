package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestServiceInstallWithoutUserSystemd runs `plexus service install`,
// `status` and `uninstall` as a user would, with HOME a fresh folder and
// no systemd user instance to reach (as in this container): the unit is
// written under ~/.config/systemd/user running this very binary, the
// answer says what is missing and what to run, and uninstall removes it.
func TestServiceInstallWithoutUserSystemd(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemctl"); err != nil {
		t.Skip("systemctl is not installed")
	}
	bin := testenv.Binary(t)
	home := t.TempDir()
	runtimeDir := t.TempDir()
	run := func(args ...string) (stdout, stderr string, err error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "USER=ann",
			"PLEXUS_HOME=" + filepath.Join(home, "plexus home"),
			"XDG_RUNTIME_DIR=" + runtimeDir, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(runtimeDir, "bus")}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = testenv.Run(t, cmd)
		return o.String(), e.String(), err
	}

	out, errOut, err := run("service", "install")
	if err != nil {
		t.Fatalf("install: %v\n%s%s", err, out, errOut)
	}
	unit := filepath.Join(home, ".config", "systemd", "user", "plexus.service")
	if !strings.Contains(out, "wrote "+unit) || !strings.Contains(out, "no systemd user instance runs here") {
		t.Errorf("install said:\n%s", out)
	}
	if !strings.Contains(errOut, "systemctl --user enable --now plexus.service") {
		t.Errorf("install does not say what to run:\n%s", errOut)
	}
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(bin)
	for _, want := range []string{`ExecStart="` + real + `" daemon`, `Environment="PLEXUS_HOME=` + filepath.Join(home, "plexus home") + `"`, "Restart=on-failure"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unit lacks %q:\n%s", want, b)
		}
	}

	out, _, err = run("service", "status")
	if err != nil || !strings.Contains(out, "installed at "+unit) || !strings.Contains(out, "journalctl --user -u plexus.service") {
		t.Errorf("status: %v\n%s", err, out)
	}
	out, _, err = run("service", "uninstall")
	if err != nil || !strings.Contains(out, "removed "+unit) {
		t.Errorf("uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Errorf("unit still there: %v", err)
	}
	out, _, _ = run("service", "status")
	if !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall:\n%s", out)
	}
}
