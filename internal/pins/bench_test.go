package pins

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/catalog"
)

// bigFile is a pins file of 25 servers of 200 tools, each with a
// description and schemas of a common size.
func bigFile() *File {
	f := &File{Revision: 7, Servers: map[string]Server{}}
	schema := json.RawMessage(`{"properties":{"path":{"description":"` + strings.Repeat("where to look ", 8) + `","type":"string"},"limit":{"minimum":1,"type":"integer"},"recursive":{"type":"boolean"}},"required":["path"],"type":"object"}`)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for s := range 25 {
		rec := Server{Key: "sha256:" + strings.Repeat("a", 64), ApprovedAt: at, Tools: map[string]Tool{}}
		for i := range 200 {
			rec.Tools[fmt.Sprintf("tool_%d", i)] = Tool{Hash: "sha256:" + strings.Repeat("b", 64), PinnedAt: at,
				Definition: Definition{Description: strings.Repeat("Does a useful thing. ", 10), InputSchema: schema}}
		}
		f.Servers[fmt.Sprintf("server%d", s)] = rec
	}
	return f
}

// BenchmarkEncodePins5000 is a save of the pins of 5,000 tools.
func BenchmarkEncodePins5000(b *testing.B) {
	f := bigFile()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeFile(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNameNew200 is what naming adds to a write that pins a server's
// 200 new tools beside 5,000 pinned ones made before readable names (the
// worst case: each of those names is hashed to be kept free).
func BenchmarkNameNew200(b *testing.B) {
	f := bigFile()
	b.ReportAllocs()
	for b.Loop() {
		tools := map[string]Tool{}
		for i := range 200 {
			tools[fmt.Sprintf("new_%d", i)] = Tool{}
		}
		nameNew("newcomer", Server{}, tools, takenNames(f))
	}
}

// BenchmarkDecide200 is a decision over a server's 200 pinned tools, with
// readable names (entries renamed) and hashed ones (passed as they are).
func BenchmarkDecide200(b *testing.B) {
	s := &Store{now: time.Now, f: &File{Servers: map[string]Server{}}}
	tr := Trust{Type: "stdio", Command: "x"}
	rec := Server{Key: tr.Key(), Approved: tr, Tools: map[string]Tool{}}
	var entries []catalog.Entry
	for i := range 200 {
		e := catalog.Entry{Name: catalog.ToolName("srv", fmt.Sprintf("tool_%d", i)), Server: "srv", Tool: fmt.Sprintf("tool_%d", i),
			Description: "Does a thing.", InputSchema: json.RawMessage(`{"type":"object"}`), Kind: catalog.KindTool}
		entries = append(entries, e)
		h := hashOf(e)
		rec.Tools[e.Tool] = Tool{Hash: h.hash, Definition: h.def, Name: "srv_" + e.Tool}
	}
	s.f.Servers["srv"] = rec
	for _, hashed := range []bool{false, true} {
		b.Run(map[bool]string{false: "readable", true: "hashed"}[hashed], func(b *testing.B) {
			s.SetHashedNames(hashed)
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := s.Decide("srv", tr, entries, nil); len(d.Offered) != 200 {
					b.Fatalf("%d offered", len(d.Offered))
				}
			}
		})
	}
}
