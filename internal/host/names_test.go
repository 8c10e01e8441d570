package host

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

// TestNamesSetting: mcp.names switches the face's names between readable
// (the default) and the seeds' hashed ones at once, a call works under
// either, and a value other than the two is refused with its key path.
func TestNamesSetting(t *testing.T) {
	th := newTestHost(t)
	th.create("ex", th.example(nil))
	names := func() map[string]string {
		entries, _, err := th.Tools("ex")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range entries {
			out[e.Tool] = e.Name
		}
		return out
	}
	if got := names(); got["echo"] != "ex_echo" || got[catalog.KindReadResource] != "ex__read_resource" || th.Settings().Names != config.NamesReadable {
		t.Fatalf("readable names: %v, setting %q", got, th.Settings().Names)
	}

	rev, err := th.SetSettings(Settings{Names: config.NamesHashed}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for tool, name := range names() {
		if !strings.HasPrefix(name, "mcp_ex_") {
			t.Errorf("hashed names: %s is %q", tool, name)
		}
	}
	if res, err := th.Call(t.Context(), catalog.ToolName("ex", "echo"), json.RawMessage(`{"text": "hashed"}`)); err != nil || resultText(res) != "hashed" {
		t.Errorf("call by the hashed name: %v %v", res, err)
	}

	var ve *config.Error
	if _, err := th.SetSettings(Settings{Names: "short"}, rev); !errors.As(err, &ve) || !strings.Contains(err.Error(), "mcp.names") {
		t.Errorf("names = short: %v, want a validation error naming mcp.names", err)
	}
	if _, err := th.SetSettings(Settings{Names: config.NamesReadable}, rev); err != nil {
		t.Fatal(err)
	}
	if got := names(); got["echo"] != "ex_echo" || th.opts.Store.Config().MCP.Names != "" {
		t.Errorf("back to readable: %v, stored %q", got, th.opts.Store.Config().MCP.Names)
	}
	if res, err := th.Call(t.Context(), "ex_echo", json.RawMessage(`{"text": "readable"}`)); err != nil || resultText(res) != "readable" {
		t.Errorf("call by the readable name: %v %v", res, err)
	}
}
