package face

import (
	"encoding/json"
	"strings"
	"testing"
)

const goodCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},
	"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
	"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`

func TestParseCall2026(t *testing.T) {
	req, ok := parseCall(readEnvelope([]byte(goodCall)), true)
	if !ok || req.name != "echo" || string(req.id) != "7" || string(req.caps) != `{"elicitation":{}}` {
		t.Fatalf("good call: %+v %v", req, ok)
	}
	if _, has := req.params["_meta"]; has || string(req.params["arguments"]) != `{"text":"x"}` {
		t.Errorf("params: %s", req.params)
	}
	// A progress token and a log level are the face's to carry.
	req, ok = parseCall(readEnvelope([]byte(strings.Replace(goodCall, `"_meta":{`, `"_meta":{"progressToken":1,"io.modelcontextprotocol/logLevel":"info","x":[1],`, 1))), true)
	if !ok || req.token != float64(1) || req.level != "info" || string(req.params["_meta"]) != `{"x":[1]}` {
		t.Errorf("progress and log level: %+v %v", req, ok)
	}
	for name, body := range map[string]string{
		"other version":   strings.Replace(goodCall, `"2026-07-28"`, `"2025-11-25"`, 1),
		"no client":       strings.Replace(goodCall, `"io.modelcontextprotocol/clientInfo"`, `"x"`, 1),
		"other method":    strings.Replace(goodCall, `tools/call`, `tools/list`, 1),
		"notification":    strings.Replace(goodCall, `"id":7,`, ``, 1),
		"null id":         strings.Replace(goodCall, `"id":7`, `"id":null`, 1),
		"float id":        strings.Replace(goodCall, `"id":7`, `"id":7.5`, 1),
		"batch":           "[" + goodCall + "]",
		"bad version":     strings.Replace(goodCall, `"2.0"`, `"1.0"`, 1),
		"name a number":   strings.Replace(goodCall, `"name":"echo"`, `"name":3`, 1),
		"truncated":       goodCall[:40],
		"trailing junk":   goodCall + "x",
		"escaped name":    strings.Replace(goodCall, `"name":"echo"`, `"name":"ech\u006f"`, 1),
		"twice a name":    strings.Replace(goodCall, `"name":"echo"`, `"name":"echo","name":"other"`, 1),
		"caps not object": strings.Replace(goodCall, `{"elicitation":{}}`, `[]`, 1),
		"extra member":    strings.Replace(goodCall, `"id":7,`, `"id":7,"x":1,`, 1),
		"null token":      strings.Replace(goodCall, `"_meta":{`, `"_meta":{"progressToken":null,`, 1),
	} {
		if _, ok := parseCall(readEnvelope([]byte(body)), true); ok {
			t.Errorf("%s: taken by the face", name)
		}
	}
}

func FuzzParseCall(f *testing.F) {
	f.Add([]byte(goodCall))
	f.Add([]byte(sessionCall))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, stateless := range []bool{false, true} {
			req, ok := parseCall(readEnvelope(body), stateless)
			if !ok {
				continue
			}
			// What the face forwards must be valid JSON.
			if !plainID(req.id) || !json.Valid(appendResponse(req.id, json.RawMessage(`{}`))) {
				t.Fatalf("invalid id %q", req.id)
			}
			for k, v := range req.params {
				if !json.Valid(v) {
					t.Fatalf("param %s not JSON: %q", k, v)
				}
			}
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

func TestParseCallSession(t *testing.T) {
	req, ok := parseCall(readEnvelope([]byte(sessionCall)), false)
	if !ok || req.name != "echo" || string(req.id) != "3" || string(req.params["arguments"]) != `{"text":"x"}` {
		t.Fatalf("a call: %+v %v", req, ok)
	}
	for name, body := range map[string]string{
		"float id":      strings.Replace(sessionCall, `"id":3`, `"id":3.5`, 1),
		"escaped name":  strings.Replace(sessionCall, `"echo"`, `"ech\u006f"`, 1),
		"twice a name":  strings.Replace(sessionCall, `"name":"echo"`, `"name":"echo","name":"x"`, 1),
		"bad version":   strings.Replace(sessionCall, `"2.0"`, `"1.0"`, 1),
		"truncated":     sessionCall[:30],
		"extra member":  strings.Replace(sessionCall, `"id":3,`, `"id":3,"x":1,`, 1),
		"trailing junk": sessionCall + "]",
		"stateless":     strings.Replace(sessionCall, `"name"`, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name"`, 1),
	} {
		if _, ok := parseCall(readEnvelope([]byte(body)), false); ok {
			t.Errorf("%s: taken", name)
		}
	}
	// What the face does not model passes as the client wrote it: a task,
	// null arguments, _meta beside a progress token.
	req, ok = parseCall(readEnvelope([]byte(strings.Replace(sessionCall, `"name"`, `"_meta":{"progressToken":"p","x":1},"task":{},"name"`, 1))), false)
	if !ok || req.token != "p" || string(req.params["_meta"]) != `{"x":1}` || string(req.params["task"]) != `{}` {
		t.Errorf("a call with a task and other _meta: %+v %v", req, ok)
	}
	req, ok = parseCall(readEnvelope([]byte(strings.Replace(sessionCall, `{"text":"x"}`, `null`, 1))), false)
	if !ok || string(req.params["arguments"]) != "null" {
		t.Errorf(`"arguments": null: %+v %v`, req, ok)
	}
}

func TestIsResponse(t *testing.T) {
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
		if got := readEnvelope([]byte(body)).isResponse(); got != want {
			t.Errorf("isResponse(%s) = %v, want %v", body, got, want)
		}
	}
}

func FuzzReadMessages(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"plexus-ask-1","result":{"action":"accept"}}`))
	f.Add([]byte("[" + sessionCall + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, _ := readMessages(body)
		for _, m := range msgs {
			if !json.Valid(m.raw) || m.isResponse() && !json.Valid(m.id) {
				t.Fatalf("%q: %+v", body, m)
			}
			if m.isRequest() && idKey(m.id) == "" {
				t.Fatalf("%q: no key", body)
			}
		}
	})
}
