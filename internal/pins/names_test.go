package pins

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/catalog"
	"github.com/plexus-mcp/plexus/internal/config"
)

func offeredNames(d Decision) map[string]string {
	out := map[string]string{}
	for _, e := range d.Offered {
		out[e.Server+"/"+e.Tool] = e.Name
	}
	return out
}

func readRes(server string) catalog.Entry {
	return catalog.Entry{Name: catalog.OpName(server, catalog.KindReadResource), Server: server, Tool: catalog.KindReadResource,
		Description: "Read a resource", InputSchema: json.RawMessage(`{"type":"object"}`), Kind: catalog.KindReadResource}
}

// TestNamesCollisionRenamesTheNewcomer: server a's tool b_c and server
// a_b's tool c both want a_b_c. Whichever is pinned first keeps it, the
// other gets a short suffix, and a restart — the servers then coming in
// the other order — changes no name.
func TestNamesCollisionRenamesTheNewcomer(t *testing.T) {
	servers := map[string]config.Server{"a": stdio("a-mcp"), "a_b": stdio("ab-mcp")}
	entries := map[string][]catalog.Entry{
		"a":   {tool("a", "b_c", "One."), tool("a", "x", "X."), readRes("a")},
		"a_b": {tool("a_b", "c", "Two.")},
	}
	for _, order := range [][]string{{"a", "a_b"}, {"a_b", "a"}} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			home := t.TempDir()
			s := open(t, home, servers)
			got := map[string]string{}
			for _, server := range order {
				d := s.Check(server, TrustOf(servers[server]), entries[server])
				for k, v := range offeredNames(d) {
					got[k] = v
				}
			}
			first, second := order[0], order[1]
			firstTool, secondTool := map[string]string{"a": "a/b_c", "a_b": "a_b/c"}[first], map[string]string{"a": "a/b_c", "a_b": "a_b/c"}[second]
			if got[firstTool] != "a_b_c" || !strings.HasPrefix(got[secondTool], "a_b_c_") || len(got[secondTool]) != len("a_b_c_")+4 {
				t.Fatalf("names %v: want %s to keep a_b_c and %s suffixed", got, firstTool, secondTool)
			}
			if got["a/x"] != "a_x" || got["a/read_resource"] != "a__read_resource" {
				t.Errorf("names %v: want a_x and a__read_resource", got)
			}
			// A restart, the servers in the other order.
			s2 := open(t, home, servers)
			for _, server := range slices.Backward(order) {
				for k, v := range offeredNames(s2.Check(server, TrustOf(servers[server]), entries[server])) {
					if got[k] != v {
						t.Errorf("after a restart %s is %q, was %q", k, v, got[k])
					}
				}
			}
		})
	}
}

// TestNamesOfOneBatchIgnoreArrivalOrder: tools first pinned in one write
// get the same names whichever server's came first.
func TestNamesOfOneBatchIgnoreArrivalOrder(t *testing.T) {
	servers := map[string]config.Server{"a": stdio("a-mcp"), "a_b": stdio("ab-mcp")}
	fresh := func(s *Store, server string, e catalog.Entry) map[string]hashed {
		return map[string]hashed{e.Tool: s.definitionLocked(e)}
	}
	var names []map[string]Server
	for _, order := range [][]string{{"a", "a_b"}, {"a_b", "a"}} {
		s := open(t, t.TempDir(), servers)
		e := map[string]catalog.Entry{"a": tool("a", "b_c", "One."), "a_b": tool("a_b", "c", "Two.")}
		s.mu.Lock()
		var b *batch
		for _, server := range order {
			b = s.enqueueLocked(server, TrustOf(servers[server]), fresh(s, server, e[server]))
		}
		s.mu.Unlock()
		if err := s.commit(b); err != nil {
			t.Fatal(err)
		}
		names = append(names, s.File().Servers)
	}
	for _, k := range [][2]string{{"a", "b_c"}, {"a_b", "c"}} {
		if n0, n1 := names[0][k[0]].Tools[k[1]].Name, names[1][k[0]].Tools[k[1]].Name; n0 != n1 || n0 == "" {
			t.Errorf("%s/%s named %q in one order, %q in the other", k[0], k[1], n0, n1)
		}
	}
}

// TestLegacyPinsKeepHashedNames: a pins.json written before readable names
// (no name in a tool's pin) keeps every pinned tool's hashed name and its
// server's operations' too, so a person's permission rules still match;
// a tool seen later gets a readable name; hashed names (mcp.names =
// "hashed") give every tool its hashed name.
func TestLegacyPinsKeepHashedNames(t *testing.T) {
	home := t.TempDir()
	servers := map[string]config.Server{"docs": stdio("docs-mcp"), "web": stdio("web-mcp")}
	s := open(t, home, servers)
	s.Check("docs", TrustOf(servers["docs"]), []catalog.Entry{tool("docs", "search", "Search.")})
	// Written as a release before readable names would have written it.
	old := s.File().Servers["docs"]
	pin := old.Tools["search"]
	pin.Name = ""
	old.Tools = map[string]Tool{"search": pin}
	f := &File{Revision: 9, Servers: map[string]Server{"docs": old}}
	data, err := encodeFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"name"`) {
		t.Fatalf("a legacy file holds a name:\n%s", data)
	}
	if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}

	s = open(t, home, servers)
	docs := []catalog.Entry{tool("docs", "search", "Search."), tool("docs", "fetch", "Fetch."), readRes("docs")}
	got := offeredNames(s.Check("docs", TrustOf(servers["docs"]), docs))
	want := map[string]string{
		"docs/search":        catalog.ToolName("docs", "search"),
		"docs/fetch":         "docs_fetch",
		"docs/read_resource": catalog.OpName("docs", catalog.KindReadResource),
	}
	if !maps.Equal(got, want) {
		t.Errorf("legacy server's names %v, want %v", got, want)
	}
	if _, err := s.Approve("web", TrustOf(servers["web"]), ""); err != nil {
		t.Fatal(err)
	}
	if got := offeredNames(s.Check("web", TrustOf(servers["web"]), []catalog.Entry{tool("web", "get", "Get."), readRes("web")})); got["web/get"] != "web_get" || got["web/read_resource"] != "web__read_resource" {
		t.Errorf("a new server's names %v", got)
	}

	s.SetHashedNames(true)
	for k, v := range offeredNames(s.Check("docs", TrustOf(servers["docs"]), docs)) {
		if !strings.HasPrefix(v, "mcp_docs_") {
			t.Errorf("hashed names: %s is %q", k, v)
		}
	}
	if got := s.NameOf("docs", "fetch"); got != catalog.ToolName("docs", "fetch") {
		t.Errorf("NameOf with hashed names = %q", got)
	}
	s.SetHashedNames(false)
	if got := s.NameOf("docs", "fetch"); got != "docs_fetch" {
		t.Errorf("NameOf with readable names = %q", got)
	}
}

// TestDecodeNames: a name edited by hand must be one clients accept and
// given to one tool only.
func TestDecodeNames(t *testing.T) {
	servers := map[string]config.Server{"a": stdio("a-mcp")}
	s := open(t, t.TempDir(), servers)
	s.Check("a", TrustOf(servers["a"]), []catalog.Entry{tool("a", "x", "X."), tool("a", "y", "Y.")})
	good, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Decode(good); err != nil || f.Servers["a"].Tools["x"].Name != "a_x" {
		t.Fatalf("Decode of the store's file: %v", err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"name": "a_y"`, `"name": "a_x"`, `servers."a".tools."y".name: "a_x" is given to servers."a".tools."x".name too`},
		{`"name": "a_y"`, `"name": "a.y"`, `servers."a".tools."y".name: is not a name clients accept`},
	} {
		f, err := Decode([]byte(strings.Replace(string(good), tc.old, tc.new, 1)))
		if f != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: Decode = %v, want %q", tc.old, tc.new, err, tc.want)
		}
	}
}
