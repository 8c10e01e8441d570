package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReloadWithAHungServer: a reload that restarts a server which never
// answers is bounded by the server's startup timeout — it then applies
// the settings, the hung server left out saying why — and while it waits
// for that start, other writes go on.
func TestReloadWithAHungServer(t *testing.T) {
	th := newTestHost(t)
	dir := t.TempDir()
	tools, hang := filepath.Join(dir, "tools.json"), filepath.Join(dir, "hang")
	if err := os.WriteFile(tools, []byte("["+rawPlain+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	th.create("flaky", mustJSON(t, map[string]any{"type": "stdio", "command": exe, "args": []string{rawServerArg, tools, hang}}))
	th.create("steady", th.example(nil))

	// From now on the server hangs; a hand edit of its startup timeout
	// (no new approval needed) restarts it on reload, and changes another.
	if err := os.WriteFile(hang, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := th.st.Config()
	flaky := cfg.MCP.Servers["flaky"]
	flaky.StartupTimeoutMs = 2000
	cfg.MCP.Servers["flaky"] = flaky
	steady := cfg.MCP.Servers["steady"]
	steady.CallTimeoutMs = 12345
	cfg.MCP.Servers["steady"] = steady
	th.writeConfigFile(cfg)

	done := make(chan error, 1)
	go func() {
		_, err := th.Reload(t.Context())
		done <- err
	}()
	// The reload waits for the hung start; a secret is saved meanwhile.
	if !waitFile(hang+".started", 20*time.Second) {
		t.Fatal("the reload never started the server again")
	}
	saved := time.Now()
	if _, err := th.SetSecret("WHILE_RELOADING", "v", 0); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(saved); took > time.Second {
		t.Errorf("a secret waited %s for the reload", took)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
	case <-time.After(30 * time.Second):
		// The start's 2 s, stopping the hung server (its grace) and
		// starting the other again: seconds, also race-built and loaded.
		t.Fatal("the reload still waits 30s after the hung server's 2s startup timeout")
	}
	if got := th.st.Config().MCP.Servers["steady"].CallTimeoutMs; got != 12345 {
		t.Errorf("the reload's settings were not applied: callTimeoutMs = %d", got)
	}
	st := th.status("flaky")
	if st.State == "ready" || !strings.Contains(st.LastError, "startup timeout") {
		t.Errorf("the hung server: %s, %q; want left out by its startup timeout", st.State, st.LastError)
	}
}

// waitFile waits until path exists.
func waitFile(path string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
