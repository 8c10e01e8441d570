package pins

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
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
