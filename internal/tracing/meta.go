package tracing

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/plexus-mcp/plexus/internal/jsonscan"
)

// FromMeta is the trace context of a request's _meta (traceparent and
// tracestate members, as MCP's trace-context convention carries them);
// zero when tracing is off or meta has none.
func FromMeta(meta json.RawMessage) Incoming {
	if !On() || len(meta) == 0 {
		return Incoming{}
	}
	return fromMeta(meta)
}

// fromMeta is FromMeta's reading, apart so that its closure's variable is
// allocated only when tracing is on.
func fromMeta(meta json.RawMessage) Incoming {
	var in Incoming
	jsonscan.Members(meta, func(k, v []byte) bool {
		switch string(k) {
		case "traceparent":
			_ = json.Unmarshal(v, &in.Traceparent)
		case "tracestate":
			_ = json.Unmarshal(v, &in.Tracestate)
		}
		return true
	})
	return in
}

// FromMetaOr is FromMeta of a request's raw _meta, else of its HTTP
// headers (nil for none).
func FromMetaOr(meta json.RawMessage, h http.Header) Incoming {
	if in := FromMeta(meta); in.Traceparent != "" {
		return in
	}
	return FromHeader(h)
}

// FromMetaMap is FromMeta of a decoded _meta (the SDK's request params);
// else, of the request's HTTP headers (nil for none).
func FromMetaMap(meta map[string]any, h http.Header) Incoming {
	if !On() {
		return Incoming{}
	}
	tp, _ := meta["traceparent"].(string)
	if tp == "" {
		return FromHeader(h)
	}
	ts, _ := meta["tracestate"].(string)
	return Incoming{Traceparent: tp, Tracestate: ts}
}

// SetMeta is a decoded _meta (nil for none) with traceparent and
// tracestate set to ctx's span, for the upstream server; m itself when
// tracing is off or ctx has no span.
func SetMeta(ctx context.Context, m map[string]any) map[string]any {
	out := Outgoing(ctx)
	if out.Traceparent == "" {
		return m
	}
	if m == nil {
		m = map[string]any{}
	}
	m["traceparent"] = out.Traceparent
	delete(m, "tracestate")
	if out.Tracestate != "" {
		m["tracestate"] = out.Tracestate
	}
	return m
}

// Meta is a request's own _meta members (an object, or empty for none)
// with traceparent and tracestate set to ctx's span, for the upstream
// server: every other member is kept as its bytes, in its order. Off (or
// no span in ctx) it is own itself.
func Meta(ctx context.Context, own json.RawMessage) json.RawMessage {
	out := Outgoing(ctx)
	if out.Traceparent == "" {
		return own
	}
	b := make([]byte, 0, len(own)+160)
	b = append(b, '{')
	if len(own) > 0 {
		ok := jsonscan.Members(own, func(k, v []byte) bool {
			if string(k) == "traceparent" || string(k) == "tracestate" {
				return true
			}
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...) // as written: Members passes no key with an escape
			b = append(b, '"', ':')
			b = append(b, v...)
			return true
		})
		if !ok {
			return own // not an object whose keys we can read: left as it is
		}
	}
	if len(b) > 1 {
		b = append(b, ',')
	}
	tp, _ := json.Marshal(out.Traceparent)
	b = append(b, `"traceparent":`...)
	b = append(b, tp...)
	if out.Tracestate != "" {
		ts, _ := json.Marshal(out.Tracestate)
		b = append(b, `,"tracestate":`...)
		b = append(b, ts...)
	}
	return append(b, '}')
}
