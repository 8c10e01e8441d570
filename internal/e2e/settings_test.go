package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestSettingsCommand: `plexus settings` shows and changes every
// section-wide setting through the daemon; while external calls are off,
// ls, the face's instructions and plexus_status say so and how to switch
// them on, and `plexus settings set face.allowExternalCall true` does it
// with no file edited by hand. Bad values are refused and change nothing.
func TestSettingsCommand(t *testing.T) {
	t.Parallel()
	e := testenv.New(t)
	e.StartDaemon()
	e.MustRun("add", "example", "--", e.Bin, "example-server")
	echo := toolNamed(t, tools(t, e), "example", "echo").Name
	const how = "plexus settings set face.allowExternalCall true"

	show := e.Run("", "settings", "show")
	if show.Code != 0 {
		t.Fatal(show)
	}
	for _, want := range []string{"callTimeoutMs", "60000 (default)", "retryMs", "face.allowExternalCall  false", "face.allowWrite         false"} {
		mustContain(t, "settings show", show.Stdout, want)
	}
	mustContain(t, "settings show (stderr)", show.Stderr, how)
	if r := e.Run("", "ls"); r.Code != 0 || !strings.Contains(r.Stderr, how) || strings.Contains(r.Stdout, how) {
		t.Fatalf("ls does not say that external calls are off (on stderr): %+v", r)
	}

	cs := connectFace(t, e)
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, how) {
		t.Errorf("instructions with external calls off: %q", ins)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plexus_status"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, how) {
		t.Errorf("plexus_status with external calls off: %+v %v", res, err)
	}
	cs.Close()

	// Bad values: usage errors, nothing saved.
	ext := filepath.Join(e.Home, "extensions.json")
	before, _ := os.ReadFile(ext)
	for _, args := range [][]string{
		{"settings", "set", "face.allowExternalCall", "maybe"},
		{"settings", "set", "callTimeoutMs", "-5"},
		{"settings", "set", "no.such.key", "1"},
		{"settings", "set", "profiles.fs", `{"servers": ["fs"], "nosuch": 1}`},
	} {
		if r := e.Run("", args...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.Code, r.Stderr)
		}
	}
	// A profile naming a server that does not exist: the daemon refuses it.
	if r := e.Run("", "settings", "set", "profiles.fs", `{"servers": ["nosuch"]}`); r.Code != 1 || !strings.Contains(r.Stderr, "profiles") {
		t.Errorf("a profile of a missing server: %+v", r)
	}
	if after, _ := os.ReadFile(ext); string(after) != string(before) {
		t.Fatalf("refused settings changed extensions.json:\n%s", after)
	}

	e.MustRun("settings", "set", "face.allowExternalCall", "true")
	e.MustRun("settings", "set", "callTimeoutMs", "45s")
	e.MustRun("settings", "set", "profiles.ex", `{"servers": ["example"], "naming": "bare"}`)
	if got := strings.TrimSpace(e.MustRun("settings", "get", "callTimeoutMs")); got != "45000" {
		t.Errorf("callTimeoutMs = %q", got)
	}
	var s apitype.Settings
	if err := json.Unmarshal([]byte(e.MustRun("settings", "show", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	if s.Face == nil || !s.Face.AllowExternalCall || s.Face.AllowWrite || s.CallTimeoutMs != 45000 ||
		!slices.Equal(s.Profiles["ex"].Servers, []string{"example"}) || s.Profiles["ex"].Naming != "bare" {
		t.Errorf("settings after set: %+v", s)
	}
	if r := e.Run("", "ls"); r.Code != 0 || strings.Contains(r.Stderr, how) {
		t.Errorf("ls still says external calls are off: %+v", r)
	}

	cs = connectFace(t, e)
	if names := toolNames(t, cs); !slices.Contains(names, echo) {
		t.Fatalf("with external calls switched on by the command: %v", names)
	}
	if ins := cs.InitializeResult().Instructions; strings.Contains(ins, how) {
		t.Errorf("instructions with external calls on: %q", ins)
	}
	cs.Close()

	e.MustRun("settings", "unset", "profiles.ex")
	e.MustRun("settings", "unset", "callTimeoutMs")
	if r := e.Run("", "settings", "get", "profiles.ex"); r.Code != 1 {
		t.Errorf("a removed profile: %+v", r)
	}
	if got := strings.TrimSpace(e.MustRun("settings", "get", "callTimeoutMs")); got != "60000 (default)" {
		t.Errorf("callTimeoutMs after unset = %q", got)
	}
}
