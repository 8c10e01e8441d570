package catalog

import (
	"strings"
	"testing"
)

// TestReadableName: server_tool where it fits and is not reserved, a short
// suffix otherwise; always a name clients accept.
func TestReadableName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"github", "create_issue", "github_create_issue"},
		{"fs", "a.b/c d", "fs_a_b_c_d"},
		{"my-server", "do-it", "my-server_do-it"},
		// Reserved: Plexus's own tools and the operations' form.
		{"search", "tools", "search_tools_" + nameHash(domainTool, "search", "tools")[:4]},
		{"plexus", "status", "plexus_status_" + nameHash(domainTool, "plexus", "status")[:4]},
		{"fs", "_read_resource", "fs__read_resource_" + nameHash(domainTool, "fs", "_read_resource")[:4]},
		{"fs", "x__get_prompt", "fs_x__get_prompt_" + nameHash(domainTool, "fs", "x__get_prompt")[:4]},
	} {
		if got := ReadableName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ReadableName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	long := ReadableName(strings.Repeat("s", 32), strings.Repeat("t", 60))
	if len(long) != maxNameLen || !validName.MatchString(long) || !strings.HasPrefix(long, strings.Repeat("s", 32)+"_tttt") {
		t.Errorf("a name past 64 characters became %q (%d)", long, len(long))
	}
	if a, b := ReadableName("srv", strings.Repeat("x", 80)+"1"), ReadableName("srv", strings.Repeat("x", 80)+"2"); a == b {
		t.Errorf("two long names sharing a prefix both became %q", a)
	}
}

// TestAssignToolNameCollision: a taken plain name gives the newcomer a
// short suffix, a longer one only if that is taken too, and the same
// newcomer always gets the same name.
func TestAssignToolNameCollision(t *testing.T) {
	taken := map[string]bool{"a_b_c": true}
	isTaken := func(n string) bool { return taken[n] }
	first := AssignToolName("a_b", "c", isTaken)
	if first == "a_b_c" || !strings.HasPrefix(first, "a_b_c_") || len(first) != len("a_b_c_")+4 {
		t.Fatalf("newcomer a_b/c got %q", first)
	}
	if again := AssignToolName("a_b", "c", isTaken); again != first {
		t.Errorf("the same newcomer got %q, then %q", first, again)
	}
	taken[first] = true
	second := AssignToolName("a_b", "c", isTaken)
	if second == first || len(second) != len("a_b_c_")+6 {
		t.Errorf("with the 4-character suffix taken too: %q", second)
	}
	for _, n := range suffixLens {
		taken[suffixed("a_b", "c", nameHash(domainTool, "a_b", "c")[:n])] = true
	}
	if last := AssignToolName("a_b", "c", isTaken); taken[last] || !validName.MatchString(last) {
		t.Errorf("with every suffix taken: %q", last)
	}
}

// TestReadableOpName: operations never take a tool's name, whatever the
// tool is called.
func TestReadableOpName(t *testing.T) {
	if got := ReadableOpName("fs", KindReadResource); got != "fs__read_resource" {
		t.Errorf("ReadableOpName = %q", got)
	}
	for _, tool := range []string{"_read_resource", "_get_prompt", "read_resource", "x__read_resource"} {
		for _, op := range []string{KindReadResource, KindGetPrompt} {
			if ReadableName("fs", tool) == ReadableOpName("fs", op) {
				t.Errorf("tool %q takes the name of %s", tool, op)
			}
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"a": true, "a-b_C9": true, "": false, "a.b": false, strings.Repeat("a", 65): false, "é": false} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}
