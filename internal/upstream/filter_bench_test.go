package upstream

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fixedAnswer is a server whose every answer is body, of type typ.
type fixedAnswer struct{ typ, body string }

func (a fixedAnswer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {a.typ}},
		Body:       io.NopCloser(strings.NewReader(a.body)),
	}, nil
}

// toolAnswer is a tool's answer of about 1 KB, as a server writes it.
var toolAnswer = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` +
	strings.Repeat("lorem ipsum \\\"dolor\\\" sit amet, ", 30) + `"}],"structuredContent":{"n":1,"list":[1,2,3,{"a":null}]}}}`

// BenchmarkFilter: what readableOnly (unreadable.go) costs a call's answer
// before the SDK's client reads it, as a JSON body and as one event of an
// event stream (with a priming event before it); beside it, for scale,
// what the SDK's client then spends decoding it.
func BenchmarkFilter(b *testing.B) {
	b.Run("sdk-decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(toolAnswer)))
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage([]byte(toolAnswer)); err != nil {
				b.Fatal(err)
			}
		}
	})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	for _, tc := range []struct{ name, typ, body string }{
		{"json", "application/json", toolAnswer},
		{"sse", "text/event-stream", "id: 1\ndata: \n\nevent: message\nid: 2\ndata: " + toolAnswer + "\n\n"},
	} {
		t := &readableOnly{base: fixedAnswer{tc.typ, tc.body}}
		buf := make([]byte, 32<<10)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(toolAnswer)))
			for b.Loop() {
				resp, err := t.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for err == nil {
					var m int
					m, err = resp.Body.Read(buf[n:])
					n += m
				}
				if err != io.EOF || n < len(toolAnswer) {
					b.Fatalf("read %d bytes: %v", n, err)
				}
				resp.Body.Close()
			}
		})
	}
}
