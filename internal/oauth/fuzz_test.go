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
	f.Add([]byte(`{"version":2,"logins":{"s":{"server":"s","rev":3,"issuer":"https://as","resource":"https://mcp","authUrl":"https://as/a","tokenUrl":"https://as/t","client":{"id":"c","kind":"dynamic"},"token":{"access":"CANARY-at","refresh":"CANARY-rt"},"refreshing":{"by":"r1","until":"2030-01-01T00:00:00Z"}}}}`))
	f.Add([]byte(`{"version":2,"logins":{"t":{"server":"s"}}}`))
	f.Add([]byte(`{"version":3,"logins":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeFile(data)
		if err != nil {
			if strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("the error quotes the file: %v", err)
			}
			return
		}
		for k, e := range got.Logins {
			if e == nil || k != e.Server {
				t.Fatalf("accepted a login under another account's key %q", k)
			}
		}
		// What is read is written back as it was read.
		data2, err := encodeFile(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeFile(data2)
		if err != nil || len(again.Logins) != len(got.Logins) {
			t.Fatalf("a decoded store does not decode once written: %v", err)
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

func FuzzParseNonce(f *testing.F) {
	for _, s := range []string{"conformance-as-dpop-nonce", "", "a b", "\"quoted\"", "x\\y", "ok!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~", strings.Repeat("n", maxNonce+1), "é", "a\r\nSet-Cookie: x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, ok := parseNonce([]string{v})
		if !ok {
			return
		}
		if n != v || n == "" || len(n) > maxNonce {
			t.Fatalf("parseNonce(%q) = %q", v, n)
		}
		for i := 0; i < len(n); i++ {
			// RFC 9449 §8.1: NQCHAR only, so that the nonce is safe to
			// put back in a JWT and never splits a header.
			if c := n[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
				t.Fatalf("accepted byte %#x", c)
			}
		}
	})
}

func FuzzParseExchange(f *testing.F) {
	const jag = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.c2ln"
	f.Add(200, "application/json", []byte(`{"access_token":"`+jag+`","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`))
	f.Add(200, "application/json; charset=utf-8", []byte(`{"access_token":"`+jag+`","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer"}`))
	f.Add(400, "application/json", []byte(`{"error":"invalid_grant","error_description":"CANARY-description\u0000x"}`))
	f.Add(200, "text/html", []byte(`<html>CANARY</html>`))
	f.Add(200, "application/json", []byte(`{"access_token":"CANARY not a jwt","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`))
	f.Add(200, "application/json", []byte(`{"access_token":1}`))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		got, err := parseExchange(status, contentType, body)
		if err != nil {
			if got != "" {
				t.Fatal("an error with an assertion")
			}
			// An error carries at most the error code and description,
			// cut and without control characters; never the assertion.
			if strings.Contains(err.Error(), jag) || strings.ContainsFunc(err.Error(), func(r rune) bool { return r < ' ' }) {
				t.Fatalf("the error quotes the answer: %q", err)
			}
			return
		}
		if status != 200 || strings.Count(got, ".") != 2 || !strings.Contains(string(body), got) {
			t.Fatalf("accepted %q from HTTP %d", got, status)
		}
	})
}
