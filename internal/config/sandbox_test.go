package config

import (
	"encoding/json"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestSandboxDecodeRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, network string }{
		{`{}`, "none"},
		{`{"network": "all"}`, "all"},
		{`{"network": []}`, ""},
		{`{"filesystem": {"read": ["/srv/docs"], "write": ["~/notes"]}, "network": ["api.github.com:443", "127.0.0.1:5432"]}`, "api.github.com:443,127.0.0.1:5432"},
	} {
		f, err := Decode([]byte(server(`{"type": "stdio", "command": "c", "sandbox": ` + tc.in + `}`)))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		sb := f.MCP.Servers["x"].Sandbox
		if sb == nil || sb.Network.String() != tc.network {
			t.Fatalf("%s: network %v, want %q", tc.in, sb, tc.network)
		}
		out, err := Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Decode(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if g.MCP.Servers["x"].Sandbox.Network.String() != tc.network {
			t.Fatalf("%s: lost in the round trip:\n%s", tc.in, out)
		}
	}
}

// "sandbox": false opts a server out of a sandbox the daemon would give
// it by default (a team's replica): it survives Encode and the settings
// API's JSON, and confines nothing.
func TestSandboxFalse(t *testing.T) {
	f, err := Decode([]byte(server(`{"type": "stdio", "command": "c", "sandbox": false}`)))
	if err != nil {
		t.Fatal(err)
	}
	sb := f.MCP.Servers["x"].Sandbox
	if sb == nil || !sb.Off || sb.Confines() || sb.Summary() != "" {
		t.Fatalf("sandbox false decoded as %+v", sb)
	}
	out, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"sandbox": false`) {
		t.Fatalf("encoded without its false:\n%s", out)
	}
	g, err := Decode(out)
	if err != nil || !reflect.DeepEqual(g.MCP.Servers["x"], f.MCP.Servers["x"]) {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	var api Server
	if err := json.Unmarshal([]byte(`{"type": "stdio", "command": "c", "sandbox": false}`), &api); err != nil || !api.Sandbox.Off {
		t.Fatalf("the API's JSON: %+v, %v", api.Sandbox, err)
	}
	if err := json.Unmarshal([]byte(`{"sandbox": {"network": "all"}}`), &api); err != nil || api.Sandbox.Off || !api.Sandbox.Confines() || api.Sandbox.Network.Mode != "all" {
		t.Fatalf("the API's JSON, an object: %+v, %v", api.Sandbox, err)
	}
	var none *Sandbox
	if none.Confines() {
		t.Error("no sandbox confines")
	}
}

func TestSandboxBadInput(t *testing.T) {
	for _, tc := range []struct{ in, path, msg string }{
		{`true`, "sandbox", "or false to run the server unconfined"},
		{`"none"`, "sandbox", "want an object, or false"},
		{`{"network": "some"}`, "sandbox.network", `unknown network "some"`},
		{`{"network": 1}`, "sandbox.network", `want "none", "all" or a list`},
		{`{"network": ["github.com"]}`, "sandbox.network[0]", "is not host:port"},
		{`{"network": ["h:0"]}`, "sandbox.network[0]", "from 1 to 65535"},
		{`{"network": ["bad host:1"]}`, "sandbox.network[0]", "not a host name"},
		{`{"filesystem": {"read": ["docs"]}}`, "sandbox.filesystem.read[0]", "is relative"},
		{`{"filesystem": {"write": ["/a/../etc"]}}`, "sandbox.filesystem.write[0]", ".. part"},
		{`{"filesystem": {"exec": []}}`, "sandbox.filesystem.exec", "unknown key"},
		{`{"fs": {}}`, "sandbox.fs", "unknown key"},
		{`{"limits": {"processes": 3}}`, "sandbox.limits.processes", "at least 32"},
		{`{"limits": {"memory": 3}}`, "sandbox.limits.memory", "unknown key"},
		{`{"limits": {"openFiles": "many"}}`, "sandbox.limits.openFiles", "want a number"},
	} {
		_, err := Decode([]byte(server(`{"type": "stdio", "command": "c", "sandbox": ` + tc.in + `}`)))
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %s: …%s…", tc.in, err, tc.path, tc.msg)
		}
	}
	_, err := Decode([]byte(server(`{"type": "http", "url": "https://h/", "sandbox": {}}`)))
	if err == nil || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("sandbox on an http server: %v", err)
	}
}

func FuzzParseHostPort(f *testing.F) {
	for _, s := range []string{"api.github.com:443", "127.0.0.1:5432", "[::1]:80", "h:0", "h:65536", ":1", "h:", "a b:1", "[::1]", "x_y.z:9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, p, err := ParseHostPort(s)
		if err != nil {
			return
		}
		if p == 0 || h == "" {
			t.Fatalf("ParseHostPort(%q) = %q, %d, nil", s, h, p)
		}
		if h2, p2, err := ParseHostPort(net.JoinHostPort(h, strconv.Itoa(int(p)))); err != nil || h2 != h || p2 != p {
			t.Fatalf("ParseHostPort(%q) = %q %d, but its join does not parse back: %q %d %v", s, h, p, h2, p2, err)
		}
	})
}
