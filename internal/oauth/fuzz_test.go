package oauth

import (
	"strings"
	"testing"
)

func FuzzDecodeFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":{"https://as https://mcp":{"server":"s","issuer":"https://as","resource":"https://mcp","authUrl":"https://as/a","tokenUrl":"https://as/t","client":{"id":"c","kind":"dynamic"},"token":{"access":"CANARY-at"}}}}`))
	f.Add([]byte(`{"version":1,"entries":{}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"entries":{"k":null}}`))
	f.Add([]byte(`{"version":1} trailing`))
	f.Add([]byte(`{"version":1,"entries":{"x":{"server":"s","token":{"access":"CANARY-at","expiry":"nope"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeFile(data)
		if err != nil {
			if strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("the error quotes the file: %v", err)
			}
			return
		}
		for k, e := range got.Entries {
			if e == nil || k != key(e.Issuer, e.Resource) {
				t.Fatalf("accepted a bad entry under %q", k)
			}
		}
	})
}

func FuzzCheckAuthorizationEndpoint(f *testing.F) {
	for _, s := range []string{"https://as.example/authorize", "http://127.0.0.1:8080/authorize", "http://localhost/a?x=1",
		"file:///etc/passwd", "javascript:alert(1)", "-oProxyCommand=id", "https://a/$(id)", "https://a/`id`", "https://a/b;c",
		"https://a/b|c", "http://evil.example/", "data:text/html,x", "https://user:pw@a/", "https://a/#frag", "HTTPS://A/B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckAuthorizationEndpoint(raw) != nil {
			return
		}
		if strings.HasPrefix(raw, "-") || strings.ContainsAny(raw, shellMeta) {
			t.Fatalf("accepted %q", raw)
		}
		low := strings.ToLower(raw)
		if !strings.HasPrefix(low, "https://") && !strings.HasPrefix(low, "http://") {
			t.Fatalf("accepted a non-http scheme: %q", raw)
		}
	})
}

func FuzzParseChallenge(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="a b"`)
	f.Add(`Bearer error="insufficient_scope", scope="admin"`)
	f.Add(`Basic realm="x", Bearer`)
	f.Add(`Bearer scope="unterminated`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, h string) {
		c := parseChallenge([]string{h})
		for _, s := range c.scope {
			if s == "" || strings.ContainsAny(s, " \t") {
				t.Fatalf("scope %q from %q", s, h)
			}
		}
	})
}
