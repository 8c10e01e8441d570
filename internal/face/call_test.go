package face

import (
	"encoding/json"
	"strings"
	"testing"
)

const goodCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},
	"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
	"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`

func TestParseFrame2026(t *testing.T) {
	req, ok := parseFrame2026(readEnvelope([]byte(goodCall)))
	if !ok || req.name != "echo" || string(req.ID) != "7" || string(req.caps) != `{"elicitation":{}}` {
		t.Fatalf("good call: %+v %v", req, ok)
	}
	if _, has := req.Params["_meta"]; has || string(req.Params["arguments"]) != `{"text":"x"}` {
		t.Errorf("params: %s", req.Params)
	}
	for name, body := range map[string]string{
		"progress":        strings.Replace(goodCall, `"_meta":{`, `"_meta":{"progressToken":1,`, 1),
		"log level":       strings.Replace(goodCall, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"info",`, 1),
		"other version":   strings.Replace(goodCall, `"2026-07-28"`, `"2025-11-25"`, 1),
		"no client":       strings.Replace(goodCall, `"io.modelcontextprotocol/clientInfo"`, `"x"`, 1),
		"other method":    strings.Replace(goodCall, `tools/call`, `tools/list`, 1),
		"notification":    strings.Replace(goodCall, `"id":7,`, ``, 1),
		"null id":         strings.Replace(goodCall, `"id":7`, `"id":null`, 1),
		"batch":           "[" + goodCall + "]",
		"bad version":     strings.Replace(goodCall, `"2.0"`, `"1.0"`, 1),
		"name a number":   strings.Replace(goodCall, `"name":"echo"`, `"name":3`, 1),
		"truncated":       goodCall[:40],
		"trailing junk":   goodCall + "x",
		"escaped name":    strings.Replace(goodCall, `"name":"echo"`, `"name":"ech\u006f"`, 1),
		"twice a name":    strings.Replace(goodCall, `"name":"echo"`, `"name":"echo","name":"other"`, 1),
		"caps not object": strings.Replace(goodCall, `{"elicitation":{}}`, `[]`, 1),
		"extra member":    strings.Replace(goodCall, `"id":7,`, `"id":7,"x":1,`, 1),
	} {
		if _, ok := parseFrame2026(readEnvelope([]byte(body))); ok {
			t.Errorf("%s: taken by the frame path", name)
		}
	}
}

func FuzzParseFrame2026(f *testing.F) {
	f.Add([]byte(goodCall))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := parseFrame2026(readEnvelope(body))
		if !ok {
			return
		}
		// What the frame path forwards must be valid JSON.
		if !json.Valid(req.ID) || !json.Valid(appendResponse(req.ID, json.RawMessage(`{}`))) {
			t.Fatalf("invalid id %q", req.ID)
		}
		for k, v := range req.Params {
			if !json.Valid(v) {
				t.Fatalf("param %s not JSON: %q", k, v)
			}
		}
	})
}

func TestCompleted(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[]}`:                        `{"resultType":"complete","content":[]}`,
		`{}`:                                    `{"resultType":"complete"}`,
		` { } `:                                 `{"resultType":"complete" }`,
		`{"resultType":"input_required","a":1}`: `{"resultType":"input_required","a":1}`,
		`[]`:                                    `[]`,
	} {
		got := string(completed(json.RawMessage(in)))
		if got != want {
			t.Errorf("completed(%s) = %s, want %s", in, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("completed(%s) is not JSON", in)
		}
	}
}

func FuzzCompleted(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"x"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, res []byte) {
		if !json.Valid(res) {
			return
		}
		if out := completed(res); !json.Valid(out) {
			t.Fatalf("completed(%q) = %q", res, out)
		}
	})
}

func TestErrorStatus(t *testing.T) {
	for code, want := range map[int64]int{-32601: 404, -32602: 400, -32021: 400, -32022: 400, -32603: 200, 1: 200} {
		if got := errorStatus(code); got != want {
			t.Errorf("errorStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

const sessionCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`

func TestParseSessionRequest(t *testing.T) {
	req, method, ok := parseSessionRequest(readEnvelope([]byte(sessionCall)))
	if !ok || method != "tools/call" || req.name != "echo" || string(req.ID) != "3" || string(req.Params["arguments"]) != `{"text":"x"}` {
		t.Fatalf("a call: %+v %s %v", req, method, ok)
	}
	if req, method, ok := parseSessionRequest(readEnvelope([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"r"}}`))); !ok ||
		method != "notifications/cancelled" || string(req.cancelled) != `"a"` {
		t.Errorf("a cancellation: %+v %s %v", req, method, ok)
	}
	if _, method, ok := parseSessionRequest(readEnvelope([]byte(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`))); !ok || method != "logging/setLevel" {
		t.Errorf("setLevel: %s %v", method, ok)
	}
	for name, body := range map[string]string{
		"progress":      strings.Replace(sessionCall, `"name"`, `"_meta":{"progressToken":1},"name"`, 1),
		"a task":        strings.Replace(sessionCall, `"name"`, `"task":{},"name"`, 1),
		"float id":      strings.Replace(sessionCall, `"id":3`, `"id":3.5`, 1),
		"escaped name":  strings.Replace(sessionCall, `"echo"`, `"ech\u006f"`, 1),
		"twice a name":  strings.Replace(sessionCall, `"name":"echo"`, `"name":"echo","name":"x"`, 1),
		"bad version":   strings.Replace(sessionCall, `"2.0"`, `"1.0"`, 1),
		"truncated":     sessionCall[:30],
		"extra member":  strings.Replace(sessionCall, `"id":3,`, `"id":3,"x":1,`, 1),
		"trailing junk": sessionCall + "]",
	} {
		if _, _, ok := parseSessionRequest(readEnvelope([]byte(body))); ok {
			t.Errorf("%s: taken", name)
		}
	}
	// Other _meta passes (the SDK's path does not forward it either).
	if _, _, ok := parseSessionRequest(readEnvelope([]byte(strings.Replace(sessionCall, `"name"`, `"_meta":{"x":1},"name"`, 1)))); !ok {
		t.Error("a call with other _meta refused")
	}
}

func FuzzParseSessionRequest(f *testing.F) {
	f.Add([]byte(sessionCall))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, method, ok := parseSessionRequest(readEnvelope(body))
		if !ok {
			return
		}
		if method == "notifications/cancelled" && !json.Valid(req.cancelled) {
			t.Fatalf("cancelled id not JSON: %q", req.cancelled)
		}
		if method != "tools/call" {
			return
		}
		if !plainID(req.ID) {
			t.Fatalf("id %q", req.ID)
		}
		for k, v := range req.Params {
			if !json.Valid(v) {
				t.Fatalf("param %s not JSON: %q", k, v)
			}
		}
	})
}

func TestScanAnswer(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{"action":"accept"}}`:       true,
		`{"jsonrpc":"2.0","id":"plexus-ask-1","error":{"code":-1,"message":"no"}}`: true,
		`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{},"error":{"code":1}}`:     false,
		`{"jsonrpc":"2.0","id":"plexus-ask-1"}`:                                    false,
		`{"jsonrpc":"2.0","result":{}}`:                                            false,
		`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{},"method":"x"}`:           false,
		`{"jsonrpc":"1.0","id":"plexus-ask-1","result":{}}`:                        false,
		`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{}`:                         false,
	} {
		if _, ok := scanAnswer(readEnvelope([]byte(body))); ok != want {
			t.Errorf("scanAnswer(readEnvelope(%s)) = %v, want %v", body, ok, want)
		}
	}
}

func FuzzScanAnswer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{"action":"accept"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, ok := scanAnswer(readEnvelope(body))
		if !ok {
			return
		}
		if !json.Valid(a.id) || (a.result == nil) == (a.err == nil) || a.result != nil && !json.Valid(a.result) || a.err != nil && !json.Valid(a.err) {
			t.Fatalf("%q: %+v", body, a)
		}
	})
}
