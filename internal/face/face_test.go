package face

import (
	"net/http"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

func TestStateless(t *testing.T) {
	for _, tc := range []struct {
		session, version string
		want             bool
	}{
		{"", "2026-07-28", true},
		{"abc", "2026-07-28", false},
		{"", "2025-11-25", false},
		{"", "", false},
	} {
		r, _ := http.NewRequest("POST", "/mcp", nil)
		if tc.session != "" {
			r.Header.Set("Mcp-Session-Id", tc.session)
		}
		if tc.version != "" {
			r.Header.Set("Mcp-Protocol-Version", tc.version)
		}
		if got := stateless(r); got != tc.want {
			t.Errorf("stateless(session %q, version %q) = %v", tc.session, tc.version, got)
		}
	}
}

func TestResolveProfile(t *testing.T) {
	cfg := &config.File{}
	cfg.MCP.Face = &config.Face{AllowExternalCall: true}
	cfg.MCP.Profiles = map[string]config.Profile{
		"fs":      {Servers: []string{"fs"}, Naming: config.NamingBare},
		"default": {Servers: []string{"a", "b"}, MetaTools: true},
	}
	d, err := resolveProfile(cfg, "")
	if err != nil || !d.metaTools || !d.has("a") || d.has("fs") || !d.external || d.write {
		t.Errorf("default: %+v %v", d, err)
	}
	d, err = resolveProfile(cfg, "fs")
	if err != nil || d.naming != config.NamingBare || !d.has("fs") || d.has("a") {
		t.Errorf("fs: %+v %v", d, err)
	}
	if _, err := resolveProfile(cfg, "nope"); err == nil {
		t.Error("an unknown profile resolved")
	}
	delete(cfg.MCP.Profiles, "default")
	if d, err := resolveProfile(cfg, ""); err != nil || !d.has("anything") || d.naming != config.NamingPlexus {
		t.Errorf("no default profile: %+v %v", d, err)
	}
	a, _ := resolveProfile(cfg, "fs")
	b, _ := resolveProfile(cfg, "fs")
	if !a.same(b) {
		t.Error("a profile differs from itself")
	}
	cfg.MCP.Face.AllowWrite = true
	if c, _ := resolveProfile(cfg, "fs"); c.same(a) {
		t.Error("a gate change went unnoticed")
	}
}

func TestSearch(t *testing.T) {
	entries := []catalog.Entry{
		{Name: "mcp_fs_read_file_x", Server: "fs", Tool: "read_file", Description: "Read a file from disk."},
		{Name: "mcp_web_fetch_y", Server: "web", Tool: "fetch", Description: "Fetch a URL and return the file it serves."},
		{Name: "mcp_ex_echo_z", Server: "ex", Tool: "echo", Description: "Echo."},
	}
	hits := search(entries, "file", 10)
	if len(hits) != 2 || hits[0].Name != "mcp_fs_read_file_x" {
		t.Errorf("file: %+v", hits) // a name match ranks above a description match
	}
	if hits := search(entries, "", 2); len(hits) != 2 {
		t.Errorf("empty query with limit 2: %+v", hits)
	}
	if hits := search(entries, "nothing-like-it", 10); hits == nil || len(hits) != 0 {
		t.Errorf("no match: %#v", hits)
	}
}
