package upstream

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzDecodeFrame feeds arbitrary server output to the stdio frame reader
// and decoder: they must never panic, every decoded message must encode
// again, and no frame may exceed the size limit.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"x"}}]`,
		`[]`, `[1]`, `{"jsonrpc":"2.0"}`, "\x00\xff", `{"jsonrpc":"2.0","id":1e400,"result":null}`,
		"Starting server...\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		for {
			line, err := readFrame(br)
			if len(line) > maxFrameSize {
				t.Fatalf("frame of %d bytes passed the limit", len(line))
			}
			if msgs, ok := decodeFrame(line); ok {
				for _, m := range msgs {
					if _, err := jsonrpc.EncodeMessage(m); err != nil {
						t.Fatalf("decoded message does not encode: %v", err)
					}
				}
			}
			if err != nil {
				return
			}
		}
	})
}
