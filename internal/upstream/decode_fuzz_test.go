package upstream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzDecodeMessage: the frame decoder agrees with the SDK's on every frame
// both accept (kind, id, method, params, result, error code), and accepts
// every well-formed frame the SDK accepts.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"plexus-frame-7","result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad","data":{"a":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"plexus-1","progress":1}}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":[1],"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// encoding/json matches keys case-insensitively, the SDK exactly:
		// frames whose keys differ only in case are read differently
		// (decodeMessage says so), and are left out here.
		lower := bytes.ToLower(data)
		for _, k := range []string{`"jsonrpc"`, `"id"`, `"method"`, `"params"`, `"result"`, `"error"`, `"code"`, `"message"`, `"data"`} {
			if bytes.Count(lower, []byte(k)) != bytes.Count(data, []byte(k)) {
				return
			}
		}
		ours, oerr := decodeMessage(data)
		sdk, serr := jsonrpc.DecodeMessage(data)
		if serr != nil || oerr != nil {
			return // both decoders have their own strictness on bad input; only agreement on good input matters
		}
		switch s := sdk.(type) {
		case *jsonrpc.Request:
			l, ok := ours.(*jsonrpc.Request)
			if !ok || l.Method != s.Method || l.ID != s.ID || !bytes.Equal(l.Params, s.Params) {
				t.Fatalf("request differs: ours %+v, sdk %+v", ours, sdk)
			}
		case *jsonrpc.Response:
			l, ok := ours.(*jsonrpc.Response)
			if !ok || l.ID != s.ID || !bytes.Equal(l.Result, s.Result) || (l.Error == nil) != (s.Error == nil) {
				t.Fatalf("response differs: ours %+v, sdk %+v", ours, sdk)
			}
		}
	})
}

// FuzzDeliverFrame: a frame the frame reader hands over undecoded is one
// the SDK reads as a successful answer with the same id and result.
func FuzzDeliverFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"plexus-frame-7","result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"id":"plexus-frame-1","jsonrpc":"2.0","result":{}}` + "\n",
		`{"jsonrpc":"2.0","id":"plexus-frame-2","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":"plexus-frame-3","result":{},"result":[]}`,
		`{"jsonrpc":"2.0","id":"plexus-frame-\u0034","result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := frameCalls{pending: map[string]frameWait{}}
		probes := map[string]chan frameAnswer{}
		// Every id the frame could carry is awaited.
		for _, id := range []string{"plexus-frame-1", "plexus-frame-2", "plexus-frame-3", "plexus-frame-7"} {
			probes[id] = make(chan frameAnswer, 1)
			fc.pending[id] = frameWait{id: id, ch: probes[id]}
		}
		if !fc.deliverFrame(data) {
			return
		}
		var gotID string
		var got frameAnswer
		for id, ch := range probes {
			select {
			case a := <-ch:
				if gotID != "" {
					t.Fatalf("delivered %q to two calls, %s and %s", data, gotID, id)
				}
				gotID, got = id, a
			default:
			}
		}
		if gotID == "" {
			return // an answer to no call of ours, dropped
		}
		if _, left := fc.pending[gotID]; left {
			t.Fatalf("delivered %q to %s, which is still awaited", data, gotID)
		}
		sdk, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
		resp, ok := sdk.(*jsonrpc.Response)
		if err != nil || !ok || resp.Error != nil || got.err != nil {
			t.Fatalf("delivered %q (error %v), which the SDK reads as %v, %v", data, got.err, sdk, err)
		}
		if resp.ID.Raw() != gotID || !bytes.Equal(bytes.TrimSpace(resp.Result), bytes.TrimSpace(got.result)) {
			t.Fatalf("delivered to %s result %s; the SDK reads id %v result %s", gotID, got.result, resp.ID, resp.Result)
		}
	})
}

// FuzzReadsAsIs: what readsAsIs passes at a scan, decodeForSDK passes as
// it is, as one message of the same kind, and the SDK's decoder reads.
func FuzzReadsAsIs(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"plexus-frame-7","result":{"content":[{"type":"text","text":"x\"y"}]}}`,
		` {"result":{},"id":-1.5e3,"jsonrpc":"2.0"} `,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":null}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"id":2}`,
		`{"jsonrpc":"2.0","ID":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}x`,
		`{"jsonrpc":"2.0","id":1,"method":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		response, ok := readsAsIs(data)
		if !ok {
			return
		}
		msgs, asIs, ok := decodeForSDK(data)
		if !ok || !asIs || len(msgs) != 1 {
			t.Fatalf("readsAsIs passes %q; decodeForSDK: %d messages, as it is %v, ok %v", data, len(msgs), asIs, ok)
		}
		if _, isResponse := msgs[0].(*jsonrpc.Response); isResponse != response {
			t.Fatalf("readsAsIs says response %v of %q, decodeForSDK %T", response, data, msgs[0])
		}
		if _, err := jsonrpc.DecodeMessage(data); err != nil {
			t.Fatalf("readsAsIs passes %q, the SDK does not read it: %v", data, err)
		}
	})
}
