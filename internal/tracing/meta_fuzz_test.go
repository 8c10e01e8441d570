package tracing

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzMeta: whatever _meta object a client sends, the upstream's is valid
// JSON with exactly one traceparent, and off it is the client's own bytes.
func FuzzMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"traceparent":"x","a":[1,{"b":"}"}]}`, `{"a\"":1}`, `{"tracestate":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, own string) {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(own), &obj) != nil {
			return // the face passes only a valid object
		}
		if got := Meta(context.Background(), json.RawMessage(own)); string(got) != own {
			t.Fatalf("off: %s became %s", own, got)
		}
		on(t)
		defer tracer.Store(nil)
		ctx, span := StartClient(context.Background(), Call{Method: "tools/call"})
		defer span.End(nil, "")
		got := Meta(ctx, json.RawMessage(own))
		var out map[string]json.RawMessage
		if err := json.Unmarshal(got, &out); err != nil {
			t.Fatalf("%s became invalid %s: %v", own, got, err)
		}
		if string(got) != own && len(out["traceparent"]) == 0 {
			t.Fatalf("%s became %s without a traceparent", own, got)
		}
	})
}
