package face

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodedIDKey is idKey by decoding alone, as it was before plainIDKey.
func decodedIDKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "?" + string(raw)
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return "?" + string(raw)
	}
	return keyOf(id)
}

// FuzzPlainIDKey: where the scan takes an id, its key is the decoded one.
func FuzzPlainIDKey(f *testing.F) {
	for _, s := range []string{`1`, `-0`, `0`, `007`, `123456789012345`, `1234567890123456`, `1.0`, `1e3`,
		`"a"`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\"", `""`, ` 42 `, `"x` + "\t" + `"`, `null`, `-`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if k, ok := plainIDKey(raw); ok {
			if want := decodedIDKey(raw); k != want {
				t.Fatalf("plainIDKey(%q) = %q, decoded %q", raw, k, want)
			}
		}
	})
}

// BenchmarkIDKey is the key of a request's id, which the face takes twice
// a call (dispatch, post).
func BenchmarkIDKey(b *testing.B) {
	for _, c := range []struct{ name, raw string }{{"number", `42`}, {"string", `"req-42"`}} {
		raw := json.RawMessage(c.raw)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				idKey(raw)
			}
		})
		b.Run(c.name+"-decoded", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodedIDKey(raw)
			}
		})
	}
}

// BenchmarkReadEnvelope: what the face reads of a client's tools/call
// before it routes it (done once per POST).
func BenchmarkReadEnvelope(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"wide_echo","arguments":{"text":"x"},"_meta":{"progressToken":3}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if readEnvelope(body).name != "tools/call" {
			b.Fatal("not a tools/call")
		}
	}
}

// BenchmarkParseCall: what the face takes of a client's tools/call to
// forward it (done once per call).
func BenchmarkParseCall(b *testing.B) {
	env := readEnvelope([]byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"wide_echo","arguments":{"text":"x"}}}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseCall(env, false); !ok {
			b.Fatal("not a call")
		}
	}
}
