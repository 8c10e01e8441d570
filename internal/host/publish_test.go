package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/testenv"
)

// TestReadyMeansCallable: a server shows "ready" — in its status and its
// events — only once its catalog is published, so that a client that
// waits for "ready" can call its tools at once. Servers that connect
// together wait for their first tools to be pinned: before, the status
// said "ready" with no tools meanwhile.
func TestReadyMeansCallable(t *testing.T) {
	const n = 8
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := testenv.Binary(t)
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"type": "stdio", "command": bin, "args": []string{"example-server"}}
	}
	cfg := mustJSON(t, map[string]any{"mcp": map[string]any{"servers": servers}})
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	th := newTestHostAt(t, home)
	events, stop := th.Subscribe()
	defer stop()
	th.Start(t.Context())

	called := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(called) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d servers ready after 60s", len(called), n)
		}
		_, sts := th.Servers()
		for _, st := range sts {
			if st.State != apitype.StateReady || called[st.Name] {
				continue
			}
			if st.Tools == 0 {
				t.Fatalf("%s is ready with no tools: its catalog is not published", st.Name)
			}
			res, err := th.Call(t.Context(), catalog.ReadableName(st.Name, "echo"), json.RawMessage(`{"text":"x"}`))
			if err != nil || res.IsError {
				t.Fatalf("calling %s's echo as soon as it is ready: %+v, %v", st.Name, res, err)
			}
			called[st.Name] = true
		}
		time.Sleep(time.Millisecond)
	}
	for {
		select {
		case ev := <-events:
			if ev.Type == apitype.EventServer && ev.Status.State == apitype.StateReady && ev.Status.Tools == 0 {
				t.Fatalf("event: %s ready with no tools", ev.Server)
			}
			continue
		default:
		}
		break
	}
}

func TestMergeByName(t *testing.T) {
	run := func(names ...string) []catalog.Entry {
		var out []catalog.Entry
		for _, n := range names {
			out = append(out, catalog.Entry{Name: n})
		}
		return out
	}
	runs := [][]catalog.Entry{run("mcp_s10_a", "mcp_s10_z"), nil, run("mcp_s1_a", "mcp_s1_b", "mcp_s1_y"), run("mcp_s2_c")}
	var got []string
	for _, e := range mergeByName(runs, 6) {
		got = append(got, e.Name)
	}
	want := []string{"mcp_s10_a", "mcp_s10_z", "mcp_s1_a", "mcp_s1_b", "mcp_s1_y", "mcp_s2_c"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merged %v, want %v", got, want)
	}
}

// TestUnsavedPinsHeldBack: tools seen for the first time whose pins cannot
// be written are held back, saying why, and the server is ready with
// them held; once the disk takes the pins again, the next publish offers
// them.
func TestUnsavedPinsHeldBack(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := mustJSON(t, map[string]any{"mcp": map[string]any{"servers": map[string]any{
		"docs": map[string]any{"type": "stdio", "command": testenv.Binary(t), "args": []string{"example-server"}}}}})
	if err := os.WriteFile(filepath.Join(home, "extensions.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	th := newTestHostAt(t, home) // trusts docs, writing pins.json
	pinsFile := th.pins.store.Path()
	if err := os.Remove(pinsFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(pinsFile, 0o700); err != nil { // a write cannot replace it
		t.Fatal(err)
	}
	th.Start(t.Context())
	var st apitype.ServerStatus
	waitFor(t, "docs ready with its tools held", func() bool {
		st = th.status("docs")
		return st.State == apitype.StateReady && len(st.Held) > 0
	})
	if st.Tools != 0 || !strings.Contains(st.Held[0].Reason, "could not be recorded") {
		t.Fatalf("unpinned tools: %d offered, held %+v", st.Tools, st.Held)
	}
	res, err := th.Call(t.Context(), catalog.ReadableName("docs", "echo"), json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "held back") {
		t.Fatalf("calling an unpinned tool: %+v, %v", res, err)
	}
	if err := os.Remove(pinsFile); err != nil {
		t.Fatal(err)
	}
	th.publish()
	if st = th.status("docs"); st.State != apitype.StateReady || st.Tools == 0 || len(st.Held) != 0 {
		t.Fatalf("after the disk came back: %s, %d tools, held %d", st.State, st.Tools, len(st.Held))
	}
}
