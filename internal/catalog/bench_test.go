package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A large catalog: 25 servers × 200 tools (R-Q-2). Targets:
// rebuilt in ≤ 50 ms after one server changes, tools/list in ≤ 10 ms.
const (
	benchServers = 25
	benchTools   = 200
)

// benchServerTools is what one server of the large catalog lists: tools
// with a description and a small schema, as a wire decode gives them.
func benchServerTools(server int) []*mcp.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"A path to act on."},` +
		`"count":{"type":"integer","description":"How many times."}},"required":["path"]}`)
	tools := make([]*mcp.Tool, benchTools)
	for i := range tools {
		tools[i] = &mcp.Tool{
			Name:        fmt.Sprintf("tool_%03d", i),
			Description: fmt.Sprintf("Tool %d of server %d: reads the file at path count times and says what it found.", i, server),
			InputSchema: schema,
		}
	}
	return tools
}

func BenchmarkToolName(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = ToolName("github", "create_pull_request")
	}
}

func BenchmarkToolNameLong(b *testing.B) {
	long := strings.Repeat("very.long-server", 4)
	b.ReportAllocs()
	for b.Loop() {
		_ = ToolName(long, "a tool name with spaces and ümlauts that must be cut short")
	}
}

// BenchmarkBuildServer is one server's part of a rebuild: 200 tools
// filtered, cleaned, bounded and named.
func BenchmarkBuildServer(b *testing.B) {
	tools := benchServerTools(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := build("s0", tools, nil, nil, nil, Filter{}, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuild5000 is the catalog rebuilt after one of 25 servers
// changed: that server's 200 tools built again, then every server's
// entries merged into one name index and sorted, as the host publishes a
// snapshot.
func BenchmarkRebuild5000(b *testing.B) {
	built := make([][]Entry, benchServers)
	for s := range built {
		e, _, err := build(fmt.Sprintf("s%d", s), benchServerTools(s), nil, nil, nil, Filter{}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		built[s] = e
	}
	changed := benchServerTools(7)
	b.ReportAllocs()
	for b.Loop() {
		e, _, err := build("s7", changed, nil, nil, nil, Filter{}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		built[7] = e
		index := make(map[string]Entry, benchServers*benchTools)
		var all []Entry
		for _, entries := range built {
			for _, e := range entries {
				index[e.Name] = e
				all = append(all, e)
			}
		}
		slices.SortFunc(all, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
		if len(index) != benchServers*benchTools {
			b.Fatalf("%d entries", len(index))
		}
	}
}

// BenchmarkRender5000 is the tools array of a tools/list of the whole
// large catalog.
func BenchmarkRender5000(b *testing.B) {
	var all []Entry
	for s := range benchServers {
		e, _, err := build(fmt.Sprintf("s%d", s), benchServerTools(s), nil, nil, nil, Filter{}, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, e...)
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		raw, err := Render(all, FormatMCP)
		if err != nil {
			b.Fatal(err)
		}
		size = len(raw)
	}
	b.ReportMetric(float64(size), "bytes")
}
