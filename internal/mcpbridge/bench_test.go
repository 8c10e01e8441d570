package mcpbridge

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The two frames of a tools/call of the example server's echo, as a
// 2026-07-28 client sends and gets them.
var (
	callFrame = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"mcp_example_echo_abcdefgh",` +
		`"arguments":{"text":"hello, world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	resultFrame = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}],` +
		`"structuredContent":{"text":"hello, world"}}}`)
)

// BenchmarkPeek is the bridge's own read of each client message: the id,
// the method and the protocol version, nothing else.
func BenchmarkPeek(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(callFrame)))
	for b.Loop() {
		h, err := peek(callFrame)
		if err != nil || h.Method != "tools/call" {
			b.Fatal(h, err)
		}
	}
}

// The SDK's frame codec, which every leg of a call through the SDK pays:
// decode and encode of the request and of its result. Against BenchmarkPeek
// it shows what forwarding frames saves (the SDK allocates a new
// streaming decoder for each decode).
func BenchmarkSDKDecodeCall(b *testing.B)   { benchDecode(b, callFrame) }
func BenchmarkSDKDecodeResult(b *testing.B) { benchDecode(b, resultFrame) }
func BenchmarkSDKEncodeCall(b *testing.B)   { benchEncode(b, callFrame) }
func BenchmarkSDKEncodeResult(b *testing.B) { benchEncode(b, resultFrame) }

func benchDecode(b *testing.B, frame []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := jsonrpc.DecodeMessage(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEncode(b *testing.B, frame []byte) {
	msg, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := jsonrpc.EncodeMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}
