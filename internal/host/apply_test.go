package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/store"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// unsetVar is a variable name that no environment of a test run sets.
const unsetVar = "PLEXUS_HOST_TEST_UNSET_TOKEN"

func requireUnset(t *testing.T) {
	t.Helper()
	if _, ok := os.LookupEnv(unsetVar); ok {
		t.Fatalf("%s is set in the environment; the test needs it unset", unsetVar)
	}
}

// settingsUnchanged checks that a refused edit left the store, its file and
// the published snapshot as they were.
func (th *testHost) settingsUnchanged(rev int64, fileBefore []byte, absent string) {
	th.t.Helper()
	cfg := th.st.Config()
	if cfg.Revision != rev {
		th.t.Errorf("store revision = %d, want %d", cfg.Revision, rev)
	}
	if _, ok := cfg.MCP.Servers[absent]; ok {
		th.t.Errorf("%s was saved", absent)
	}
	if got := th.configFile(); !bytes.Equal(got, fileBefore) {
		th.t.Errorf("extensions.json changed:\n%s\nwant\n%s", got, fileBefore)
	}
	if _, err := th.Server(absent); err == nil {
		th.t.Errorf("%s is in the host's server set", absent)
	}
	if snapRev, _ := th.Servers(); snapRev != rev {
		th.t.Errorf("published revision = %d, want %d", snapRev, rev)
	}
}

func (th *testHost) configFile() []byte {
	th.t.Helper()
	b, err := os.ReadFile(filepath.Join(th.st.Home(), store.ConfigFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		th.t.Fatal(err)
	}
	return b
}

func TestPutServerCreate(t *testing.T) {
	th := newTestHost(t)
	rev := th.create("ex", th.example(nil))
	if rev != 1 {
		t.Errorf("revision = %d, want 1", rev)
	}
	if got := th.st.Config(); got.Revision != 1 || got.MCP.Servers["ex"].Command != th.bin {
		t.Errorf("stored config = %+v", got)
	}
	th.readyPID("ex")
	snapRev, all := th.Servers()
	if snapRev != 1 || len(all) != 1 || all[0].Name != "ex" || all[0].Tools != 6 {
		t.Errorf("Servers() = %d, %+v; want revision 1 and ex with 6 tools", snapRev, all)
	}

	tools, warnings, err := th.Tools("")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Tools = %v, %v", warnings, err)
	}
	byName := map[string]catalog.Entry{}
	for _, e := range tools {
		byName[e.Name] = e
	}
	for _, tool := range []string{"echo", "sha256", "now", "sleep"} {
		e, ok := byName[catalog.ReadableName("ex", tool)]
		if !ok || e.Tool != tool || e.Server != "ex" || e.Kind != catalog.KindTool {
			t.Errorf("tool %s: entry %+v (found %v), want it named %s", tool, e, ok, catalog.ReadableName("ex", tool))
		}
	}
	if !slices.IsSortedFunc(tools, func(a, b catalog.Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Tools are not sorted by name")
	}

	// Adding it again is refused.
	_, err = th.PutServer(t.Context(), PutRequest{Name: "ex", Config: th.example(nil), Create: true})
	var ee *ExistsError
	if !errors.As(err, &ee) {
		t.Errorf("adding ex twice: %v, want *ExistsError", err)
	}
	// Replacing one that does not exist is refused.
	_, err = th.PutServer(t.Context(), PutRequest{Name: "nope", Config: th.example(nil)})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("replacing a missing server: %v, want *NotFoundError", err)
	}
}

func TestPutServerStartFailure(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(nil))
	before := th.configFile()

	_, err := th.PutServer(t.Context(), PutRequest{Name: "bad", Config: failing(), Create: true})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("PutServer(failing) = %v, want *StartError", err)
	}
	if !strings.Contains(err.Error(), "boom") {
		t.Errorf("error %q does not quote the server's stderr", err)
	}
	if !slices.Contains(se.Stderr, "boom") {
		t.Errorf("StartError.Stderr = %q, want the line boom", se.Stderr)
	}
	th.settingsUnchanged(1, before, "bad")
	th.readyPID("ex")
}

// TestRestartStartFailure: a restart whose new instance does not come up
// says so as a restart — the server runs on as it was — not as a save that
// was refused.
func TestRestartStartFailure(t *testing.T) {
	th := newTestHost(t)
	marker := filepath.Join(t.TempDir(), "started")
	script := `if [ -e "$1" ]; then echo boom >&2; exit 3; fi; touch "$1"; exec "$2" example-server`
	th.create("once", mustJSON(t, map[string]any{"type": "stdio", "command": "sh", "args": []string{"-c", script, "sh", marker, th.bin}}))
	pid := th.readyPID("once")

	err := th.Restart(t.Context(), "once")
	var se *StartError
	if !errors.As(err, &se) || !se.Restart {
		t.Fatalf("Restart = %v, want a *StartError of a restart", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "could not be restarted; it runs on as it was") || strings.Contains(msg, "saved") {
		t.Errorf("error %q does not say that the restart failed and the server runs on", msg)
	}
	if got := th.readyPID("once"); got != pid {
		t.Errorf("pid %d after the failed restart, want the first instance's %d", got, pid)
	}
}

func TestPutServerMissingVariable(t *testing.T) {
	requireUnset(t)
	th := newTestHost(t)
	for _, tc := range []struct {
		name string
		cfg  json.RawMessage
	}{
		{"remote", mustJSON(t, map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp", "bearerTokenEnvVar": unsetVar})},
		{"local", th.example(map[string]any{"env": map[string]any{"TOKEN": map[string]string{"env": unsetVar}}})},
	} {
		_, err := th.PutServer(t.Context(), PutRequest{Name: tc.name, Config: tc.cfg, Create: true})
		var mv *config.MissingVarError
		if !errors.As(err, &mv) || mv.Name != unsetVar {
			t.Errorf("%s: PutServer = %v, want *config.MissingVarError naming %s", tc.name, err, unsetVar)
		}
		th.settingsUnchanged(0, nil, tc.name)
	}

	// Once the variable is a managed secret, the same edit goes through.
	if _, err := th.SetSecret(unsetVar, "s3cret", 0); err != nil {
		t.Fatal(err)
	}
	rev := th.create("local", th.example(map[string]any{"env": map[string]any{"TOKEN": map[string]string{"env": unsetVar}}}))
	if rev != 1 {
		t.Errorf("revision = %d, want 1", rev)
	}
	th.readyPID("local")
}

func TestPutServerNoVerify(t *testing.T) {
	requireUnset(t)
	th := newTestHost(t)

	rev, err := th.PutServer(t.Context(), PutRequest{Name: "bad", Config: failing(), Create: true, NoVerify: true})
	if err != nil || rev != 1 {
		t.Fatalf("PutServer(failing, NoVerify) = %d, %v; want 1, nil", rev, err)
	}
	if _, ok := th.st.Config().MCP.Servers["bad"]; !ok {
		t.Error("the server was not saved")
	}
	th.bg.Wait() // the background start
	st := th.status("bad")
	if st.State != "failed" || !strings.Contains(st.LastError, "boom") || st.PID != 0 {
		t.Errorf("status = %q, pid %d, last error %q; want failed, quoting boom", st.State, st.PID, st.LastError)
	}
	if _, warnings, _ := th.Tools(""); len(warnings) != 1 || !strings.Contains(warnings[0], "bad is failed") {
		t.Errorf("Tools warnings = %q, want one saying bad is failed", warnings)
	}

	// A missing variable: saved, and failed with the reason. It must never
	// be started without the variable.
	cfg := th.example(map[string]any{"env": map[string]any{"TOKEN": map[string]string{"env": unsetVar}}})
	rev, err = th.PutServer(t.Context(), PutRequest{Name: "novar", Config: cfg, Create: true, NoVerify: true})
	if err != nil || rev != 2 {
		t.Fatalf("PutServer(missing variable, NoVerify) = %d, %v; want 2, nil", rev, err)
	}
	th.bg.Wait()
	st = th.status("novar")
	if st.State != "failed" || !strings.Contains(st.LastError, unsetVar) || st.PID != 0 {
		t.Errorf("status = %q, pid %d, last error %q; want failed, naming %s, never started", st.State, st.PID, st.LastError, unsetVar)
	}
	for _, r := range th.logs.records() {
		if r.attrs["server"] == "novar" && r.msg == "server connected" {
			t.Error("a server with a missing variable was connected")
		}
	}
}

func TestPutServerUnchangedKeepsProcess(t *testing.T) {
	th := newTestHost(t)
	rev := th.create("ex", th.example(map[string]any{"callTimeoutMs": 5000}))
	pid := th.readyPID("ex")

	// The same settings, written differently.
	same := json.RawMessage(`{"callTimeoutMs": 5000, "args": ["example-server"],
		"command": ` + string(mustJSON(t, th.bin)) + `, "type": "stdio", "env": {}}`)
	got, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: same, Based: rev})
	if err != nil || got != rev {
		t.Fatalf("PutServer(unchanged) = %d, %v; want %d, nil", got, err, rev)
	}
	if th.st.Config().Revision != rev {
		t.Errorf("store revision = %d, want %d", th.st.Config().Revision, rev)
	}
	if now := th.readyPID("ex"); now != pid {
		t.Errorf("pid %d -> %d: an unchanged server was restarted", pid, now)
	}
}

func TestReplaceServer(t *testing.T) {
	th := newTestHost(t)
	rev := th.create("ex", th.example(nil))
	oldPID := th.readyPID("ex")

	// A replacement that does not start leaves the old server running.
	before := th.configFile()
	_, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: failing(), Based: rev})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("replacing with a failing server: %v, want *StartError", err)
	}
	if got := th.readyPID("ex"); got != oldPID {
		t.Errorf("pid %d -> %d after a refused replacement", oldPID, got)
	}
	assertGroupAlive(t, "after a refused replacement", oldPID)
	if !bytes.Equal(th.configFile(), before) || th.st.Config().MCP.Servers["ex"].Command != th.bin {
		t.Error("a refused replacement changed the settings")
	}

	// A working replacement starts beside the old one, then the old one stops.
	logStart := len(th.logs.records())
	rev2, err := th.PutServer(t.Context(), PutRequest{Name: "ex", Config: th.example(map[string]any{"callTimeoutMs": 30000}), Based: rev})
	if err != nil || rev2 != rev+1 {
		t.Fatalf("replacing = %d, %v; want %d, nil", rev2, err, rev+1)
	}
	newPID := th.readyPID("ex")
	if newPID == oldPID {
		t.Fatal("the server was not restarted")
	}
	assertGroupGone(t, "the replaced server", oldPID)
	if got := th.st.Config().MCP.Servers["ex"].CallTimeoutMs; got != 30000 {
		t.Errorf("stored callTimeoutMs = %d, want 30000", got)
	}

	// The log shows the order: the new process connected while the old one
	// still ran, and only then did the old one exit.
	connected, exited := -1, -1
	for i, r := range th.logs.records()[logStart:] {
		if r.attrs["server"] != "ex" {
			continue
		}
		if r.msg == "server connected" && r.attrs["pid"] == int64(newPID) {
			connected = i
		}
		if r.msg == "server process exited" && exited < 0 {
			exited = i
		}
	}
	if connected < 0 || exited < 0 || connected > exited {
		t.Errorf("log order: new server connected at #%d, old one exited at #%d; want connected first", connected, exited)
	}

	// A stale edit is refused.
	_, err = th.PutServer(t.Context(), PutRequest{Name: "ex", Config: th.example(nil), Based: rev})
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Current != rev2 {
		t.Errorf("stale replace: %v, want *store.ConflictError with current revision %d", err, rev2)
	}
}

func TestDeleteServer(t *testing.T) {
	th := newTestHost(t)
	rev := th.create("ex", th.example(nil))
	th.create("other", th.example(nil))
	rev++
	pid := th.readyPID("ex")

	_, err := th.DeleteServer("ex", rev-1)
	var ce *store.ConflictError
	if !errors.As(err, &ce) || ce.Current != rev || ce.Based != rev-1 {
		t.Fatalf("DeleteServer(stale) = %v, want *store.ConflictError{Based: %d, Current: %d}", err, rev-1, rev)
	}
	assertGroupAlive(t, "after a refused delete", pid)

	got, err := th.DeleteServer("ex", rev)
	if err != nil || got != rev+1 {
		t.Fatalf("DeleteServer = %d, %v; want %d, nil", got, err, rev+1)
	}
	assertGroupGone(t, "the deleted server", pid)
	if _, ok := th.st.Config().MCP.Servers["ex"]; ok {
		t.Error("the deleted server is still in the settings")
	}
	if _, err := th.Server("ex"); err == nil {
		t.Error("the deleted server is still in the host's server set")
	}
	tools, _, _ := th.Tools("")
	for _, e := range tools {
		if e.Server == "ex" {
			t.Errorf("tool %s of the deleted server is still in the catalog", e.Name)
		}
	}
	if len(tools) == 0 {
		t.Error("the other server's tools are gone too")
	}
	var nf *NotFoundError
	if _, err := th.DeleteServer("ex", 0); !errors.As(err, &nf) {
		t.Errorf("deleting again: %v, want *NotFoundError", err)
	}
	th.readyPID("other")
}

func TestSetEnabled(t *testing.T) {
	th := newTestHost(t)
	rev := th.create("ex", th.example(nil))
	pid := th.readyPID("ex")
	echo := catalog.ReadableName("ex", "echo")

	rev, err := th.SetEnabled(t.Context(), "ex", false, rev)
	if err != nil || rev != 2 {
		t.Fatalf("SetEnabled(false) = %d, %v; want 2, nil", rev, err)
	}
	assertGroupGone(t, "the disabled server", pid)
	sc := th.st.Config().MCP.Servers["ex"]
	if sc.Enabled == nil || *sc.Enabled || sc.Command != th.bin || !slices.Equal(sc.Args, []string{"example-server"}) {
		t.Errorf("stored config = %+v, want the same server with enabled=false", sc)
	}
	if st := th.status("ex"); st.State != "disabled" || st.Enabled || st.PID != 0 {
		t.Errorf("status = %+v, want disabled without a process", st)
	}
	if _, err := th.Call(t.Context(), echo, nil); err == nil {
		t.Error("a disabled server's tool is still callable")
	}
	if again, err := th.SetEnabled(t.Context(), "ex", false, 0); err != nil || again != rev {
		t.Errorf("SetEnabled(false) again = %d, %v; want %d, nil", again, err, rev)
	}

	rev, err = th.SetEnabled(t.Context(), "ex", true, rev)
	if err != nil || rev != 3 {
		t.Fatalf("SetEnabled(true) = %d, %v; want 3, nil", rev, err)
	}
	if newPID := th.readyPID("ex"); newPID == pid {
		t.Error("the re-enabled server has the old process")
	}
	if sc := th.st.Config().MCP.Servers["ex"]; sc.Enabled != nil {
		t.Errorf("enabled = %v, want it left out (the default)", *sc.Enabled)
	}
	res, err := th.Call(t.Context(), echo, json.RawMessage(`{"text": "back"}`))
	if err != nil || res.IsError || resultText(res) != "back" {
		t.Errorf("echo after enabling = %+v, %v", res, err)
	}

	var nf *NotFoundError
	if _, err := th.SetEnabled(t.Context(), "nope", true, 0); !errors.As(err, &nf) {
		t.Errorf("SetEnabled(unknown) = %v, want *NotFoundError", err)
	}
}

// TestStartLoadsSavedSettings is the daemon's restart: servers come up from
// the store, and one that cannot be prepared is failed with the reason
// while the others load.
func TestStartLoadsSavedSettings(t *testing.T) {
	requireUnset(t)
	th := newTestHost(t)
	th.create("ex", th.example(nil))
	cfg := th.example(map[string]any{"env": map[string]any{"TOKEN": map[string]string{"env": unsetVar}}, "enabled": false})
	th.create("novar", cfg)
	th.Close()

	h2 := New(Options{Store: th.st, Shim: th.opts.Shim})
	t.Cleanup(h2.Close)
	// Enable it in the file only, as a user editing extensions.json would.
	next := th.st.Config()
	sc := next.MCP.Servers["novar"]
	sc.Enabled = nil
	next.MCP.Servers["novar"] = sc
	if _, err := th.st.CommitConfig(0, next); err != nil {
		t.Fatal(err)
	}
	h2.Start(t.Context())
	h2.bg.Wait()
	rev, all := h2.Servers()
	if rev != 3 || len(all) != 2 {
		t.Fatalf("Servers() = %d, %+v", rev, all)
	}
	// ex started once and its catalog is known: it waits for its first
	// use, listed (on demand, the default of a stdio server).
	if all[0].Name != "ex" || all[0].State != "idle" || all[0].Tools == 0 {
		t.Errorf("ex: %+v, want idle with its tools", all[0])
	}
	if all[1].Name != "novar" || all[1].State != "failed" || !strings.Contains(all[1].LastError, unsetVar) {
		t.Errorf("novar: %+v, want failed naming %s", all[1], unsetVar)
	}
	if !reflect.DeepEqual(h2.snap.Load().cfg, th.st.Config()) {
		t.Error("the snapshot's configuration differs from the store's")
	}
}

// TestPutServerSaveFailsAsRoot fills the disk under the home: the edit fails
// loudly, the server started for it is stopped, and the old one runs on.
func TestPutServerSaveFailsAsRoot(t *testing.T) {
	testenv.NeedRoot(t, "the full disk is a tmpfs mounted for the test")
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	testenv.MountTmpfs(t, home, "256k")
	th := newTestHostAt(t, home) // closed before the unmount
	st := th.st

	rev := th.create("ex", th.example(nil))
	oldPID := th.readyPID("ex")
	before := th.configFile()

	f, err := os.Create(filepath.Join(home, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for buf := make([]byte, 4096); ; {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			break
		}
	}

	logStart := len(th.logs.records())
	_, err = th.PutServer(t.Context(), PutRequest{Name: "ex", Config: th.example(map[string]any{"callTimeoutMs": 1000}), Based: rev})
	if err == nil || !strings.Contains(err.Error(), "saving") || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("PutServer on a full disk = %v, want a failed save (ENOSPC)", err)
	}
	newPID := 0
	for _, r := range th.logs.records()[logStart:] {
		if r.msg == "server connected" && r.attrs["server"] == "ex" {
			newPID = int(r.attrs["pid"].(int64))
		}
	}
	if newPID == 0 || newPID == oldPID {
		t.Fatalf("no new server was started for the edit (pid %d)", newPID)
	}
	assertGroupGone(t, "the server started for the failed edit", newPID)
	if got := th.readyPID("ex"); got != oldPID {
		t.Errorf("pid %d -> %d after a failed save", oldPID, got)
	}
	if cfg := st.Config(); cfg.Revision != rev || cfg.MCP.Servers["ex"].CallTimeoutMs != 0 {
		t.Errorf("store config after a failed save = %+v", cfg)
	}
	if !bytes.Equal(th.configFile(), before) {
		t.Error("extensions.json changed after a failed save")
	}
	if snapRev, _ := th.Servers(); snapRev != rev {
		t.Errorf("published revision = %d, want %d", snapRev, rev)
	}
}

// TestRestartFailedServerStatusAtOnce: restarting a server that is not
// running (failed) and failing again shows the new error in its status the
// moment Restart returns — not the old one until the next retry — and says
// that it is still not running, not that it "runs on as it was".
func TestRestartFailedServerStatusAtOnce(t *testing.T) {
	th := newTestHost(t)
	count := filepath.Join(t.TempDir(), "count")
	script := `n=$(cat "$1" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$1"; echo "attempt $n fails" >&2; exit 3`
	if _, err := th.PutServer(t.Context(), PutRequest{Name: "down", Create: true, NoVerify: true,
		Config: mustJSON(t, map[string]any{"type": "stdio", "command": "sh", "args": []string{"-c", script, "sh", count}})}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for th.status("down").State != "failed" || th.status("down").LastError == "" {
		if time.Now().After(deadline) {
			t.Fatalf("down never failed: %+v", th.status("down"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := th.status("down").LastError
	err := th.Restart(t.Context(), "down")
	var se *StartError
	if !errors.As(err, &se) || !se.Restart {
		t.Fatalf("Restart = %v, want a *StartError of a restart", err)
	}
	if msg := err.Error(); strings.Contains(msg, "runs on") || !strings.Contains(msg, "still not running") {
		t.Errorf("error %q: the server is not running, and the message must say so", msg)
	}
	after := th.status("down")
	n, _ := os.ReadFile(count)
	want := "attempt " + strings.TrimSpace(string(n)) + " fails"
	if after.LastError == before || !strings.Contains(after.LastError, want) || after.State != "failed" {
		t.Errorf("status right after the restart: %q (%s), want the new error %q; before it was %q", after.LastError, after.State, want, before)
	}
}
