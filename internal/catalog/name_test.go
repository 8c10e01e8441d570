package catalog

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestToolNameGolden pins the naming scheme. If this test fails, the change
// renames every tool of every user: agents' saved references and allow-lists
// break. Do not update these values unless that is the intent.
func TestToolNameGolden(t *testing.T) {
	tests := []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp_github_create_issue_mkkst2dq"},
		{"fs", "read_file", "mcp_fs_read_file_7y2mu5dd"},
		{"fs", "a.b", "mcp_fs_a_b_rgn6hoiu"},
		{"fs", "a_b", "mcp_fs_a_b_6zgdlgs5"},
		{"weird", "dir/ls κ", "mcp_weird_dir_ls___euinae5a"},
		{"srv", strings.Repeat("x", 200), "mcp_srv_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_c3rvruzm"},
		{strings.Repeat("s", 32), strings.Repeat("t", 60), "mcp_ssssssssssssssssssssssssssssssss_tttttttttttttttttt_2bs6h6vu"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
}

func TestOpNameGolden(t *testing.T) {
	tests := []struct{ server, op, want string }{
		{"fs", KindReadResource, "mcp_fs_read_resource_eg7dmdcb"},
		{"fs", KindGetPrompt, "mcp_fs_get_prompt_hitauhlh"},
	}
	for _, tt := range tests {
		if got := OpName(tt.server, tt.op); got != tt.want {
			t.Errorf("OpName(%q, %q) = %q, want %q", tt.server, tt.op, got, tt.want)
		}
	}
}

func TestNamesDistinct(t *testing.T) {
	tests := []struct {
		name string
		a, b string
	}{
		{"same tool on two servers", ToolName("github", "search"), ToolName("gitlab", "search")},
		{"dot vs underscore", ToolName("fs", "a.b"), ToolName("fs", "a_b")},
		{"slash vs underscore", ToolName("fs", "a/b"), ToolName("fs", "a_b")},
		{"unicode vs underscore", ToolName("fs", "é"), ToolName("fs", "_")},
		{"two unicode letters", ToolName("fs", "é"), ToolName("fs", "ü")},
		{"server/tool split", ToolName("a_b", "c"), ToolName("a", "b_c")},
		{"long names sharing a prefix", ToolName("fs", strings.Repeat("x", 100)+"1"), ToolName("fs", strings.Repeat("x", 100)+"2")},
		{"tool named like read_resource op", ToolName("fs", "read_resource"), OpName("fs", KindReadResource)},
		{"tool named like get_prompt op", ToolName("fs", "get_prompt"), OpName("fs", KindGetPrompt)},
		{"case", ToolName("fs", "Read"), ToolName("fs", "read")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a == tt.b {
				t.Errorf("both are %q", tt.a)
			}
		})
	}
}

func TestToolNameShape(t *testing.T) {
	tests := []struct {
		name, server, tool string
		wantPrefix         string
	}{
		{"plain", "github", "create_issue", "mcp_github_create_issue_"},
		{"200-char tool", "github", strings.Repeat("t", 200), "mcp_github_tttt"},
		{"sanitised", "fs", "a.b/c d", "mcp_fs_a_b_c_d_"},
		{"emoji is one underscore", "fs", "go🚀", "mcp_fs_go__"},
		{"empty tool", "fs", "", "mcp_fs__"},
		{"over-long server", strings.Repeat("s", 100), "tool", "mcp_sss"},
		{"hyphens kept", "my-server", "do-it", "mcp_my-server_do-it_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToolName(tt.server, tt.tool)
			if !validName.MatchString(got) {
				t.Errorf("ToolName = %q (len %d), not a valid model tool name", got, len(got))
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("ToolName = %q, want prefix %q", got, tt.wantPrefix)
			}
		})
	}
}

func TestLongNameKeepsServer(t *testing.T) {
	// With a server name inside the config's 32 characters, only the tool
	// part is shortened.
	server := strings.Repeat("s", 32)
	got := ToolName(server, strings.Repeat("t", 200))
	if len(got) != maxNameLen || !strings.HasPrefix(got, "mcp_"+server+"_t") {
		t.Errorf("ToolName = %q (len %d)", got, len(got))
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("github", "create_issue")
	f.Add("fs", "a.b")
	f.Add("", "")
	f.Add(strings.Repeat("s", 200), strings.Repeat("t", 200))
	f.Add("x", "\x00\xff κ🚀")
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := ToolName(server, tool)
		if !validName.MatchString(got) {
			t.Fatalf("ToolName(%q, %q) = %q: invalid", server, tool, got)
		}
		if again := ToolName(server, tool); again != got {
			t.Fatalf("ToolName not deterministic: %q then %q", got, again)
		}
		op := OpName(server, tool)
		if !validName.MatchString(op) {
			t.Fatalf("OpName(%q, %q) = %q: invalid", server, tool, op)
		}
		if op == got {
			t.Fatalf("OpName and ToolName agree on %q", got)
		}
	})
}
