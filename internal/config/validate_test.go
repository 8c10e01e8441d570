package config

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRules(t *testing.T) {
	const x = "mcp.servers.x"
	tests := []struct {
		in, path, msg string
	}{
		// R-CFG-2 names.
		{`{"mcp": {"servers": {"-x": {"type": "stdio", "command": "c"}}}}`, "mcp.servers.-x", "is not a valid name"},
		{`{"mcp": {"servers": {"_x": {"type": "stdio", "command": "c"}}}}`, "mcp.servers._x", "is not a valid name"},
		{`{"mcp": {"servers": {"` + strings.Repeat("a", 33) + `": {"type": "stdio", "command": "c"}}}}`, "mcp.servers." + strings.Repeat("a", 33), "is not a valid name"},
		{`{"mcp": {"servers": {"": {"type": "stdio", "command": "c"}}}}`, `mcp.servers[""]`, "is not a valid name"},
		{`{"mcp": {"servers": {"dökü": {"type": "stdio", "command": "c"}}}}`, `mcp.servers["dökü"]`, "is not a valid name"},
		{`{"mcp": {"profiles": {"a b": {}}}}`, `mcp.profiles["a b"]`, "is not a valid name"},

		// Tracing: a known transport, strict keys and types.
		{`{"mcp": {"tracing": {"enabled": true, "protocol": "zipkin"}}}`, "mcp.tracing.protocol", `must be "http/protobuf" (the default) or "grpc"`},
		{`{"mcp": {"tracing": {"enabeld": true}}}`, "mcp.tracing.enabeld", "unknown key"},
		{`{"mcp": {"tracing": {"enabled": "yes"}}}`, "mcp.tracing.enabled", "want true or false"},

		// Policy: strict keys, known actions, globs that compile, limits
		// that limit.
		{`{"mcp": {"policy": {"rules": [{"tool": "x_*", "action": "block"}]}}}`, "mcp.policy.rules[0].action", `must be one of "allow", "deny", "askOncePerSession", "askEveryCall"`},
		{`{"mcp": {"policy": {"rules": [{"action": "allow"}, {"tool": "[x", "action": "deny"}]}}}`, "mcp.policy.rules[1].tool", "not a valid pattern"},
		{`{"mcp": {"policy": {"rules": [{"client": "a[", "action": "deny"}]}}}`, "mcp.policy.rules[0].client", "not a valid pattern"},
		{`{"mcp": {"policy": {"rules": [{"tools": "x", "action": "deny"}]}}}`, "mcp.policy.rules[0].tools", "unknown key"},
		{`{"mcp": {"policy": {"rules": [{"destructive": "yes", "action": "deny"}]}}}`, "mcp.policy.rules[0].destructive", "want true or false"},
		{`{"mcp": {"policy": {"rules": {"tool": "x"}}}}`, "mcp.policy.rules", "want an array"},
		{`{"mcp": {"policy": {"limits": [{"tool": "x", "calls": 0, "windowMs": 1000}]}}}`, "mcp.policy.limits[0].calls", "must be at least 1"},
		{`{"mcp": {"policy": {"limits": [{"calls": 5}]}}}`, "mcp.policy.limits[0].windowMs", "must be at least 1"},
		{`{"mcp": {"policy": {"limits": [{"calls": 5, "windowMs": 1.5}]}}}`, "mcp.policy.limits[0].windowMs", "want an integer"},
		{`{"mcp": {"policy": {"rule": []}}}`, "mcp.policy.rule", "unknown key"},
		// Audit: bounds that hold a record, strict keys and types.
		{`{"mcp": {"audit": {"maxFileBytes": 100}}}`, "mcp.audit.maxFileBytes", "must be at least 4096"},
		{`{"mcp": {"audit": {"maxFiles": -1}}}`, "mcp.audit.maxFiles", "must be between 1 and 100"},
		{`{"mcp": {"audit": {"maxfiles": 3}}}`, "mcp.audit.maxfiles", "unknown key"},
		{server(`{"type": "stdio", "command": "c", "auditPayloads": "yes"}`), x + ".auditPayloads", "want true or false"},

		// Types and the keys each allows.
		{server(`{}`), x + ".type", "is required: stdio, http or sse"},
		{server(`{"type": "websocket"}`), x + ".type", `unknown type "websocket"`},
		{server(`{"type": "stdio"}`), x + ".command", "is required for a stdio server"},
		{server(`{"type": "stdio", "command": "c", "url": "https://h"}`), x + ".url", "is not allowed for a stdio server"},
		{server(`{"type": "stdio", "command": "c", "headers": {"A": "b"}}`), x + ".headers", "is not allowed for a stdio server"},
		{server(`{"type": "stdio", "command": "c", "bearerTokenEnvVar": "T"}`), x + ".bearerTokenEnvVar", "is not allowed for a stdio server"},
		{server(`{"type": "stdio", "command": "c", "oauth": {}}`), x + ".oauth", "is not allowed for a stdio server"},
		{server(`{"type": "http"}`), x + ".url", "is required for an http server"},
		{server(`{"type": "sse"}`), x + ".url", "is required for an sse server"},
		{server(`{"type": "http", "url": "https://h", "command": "c"}`), x + ".command", "is not allowed for an http server"},
		{server(`{"type": "sse", "url": "https://h", "args": ["a"]}`), x + ".args", "is not allowed for an sse server"},
		{server(`{"type": "http", "url": "https://h", "cwd": "/"}`), x + ".cwd", "is not allowed for an http server"},
		{server(`{"type": "http", "url": "https://h", "env": {"A": {"env": "B"}}}`), x + ".env", "is not allowed for an http server"},
		{server(`{"type": "stdio", "command": "c\u0000"}`), x + ".command", "contains a NUL byte"},
		{server(`{"type": "stdio", "command": "c", "args": ["a", "b\u0000"]}`), x + ".args[1]", "contains a NUL byte"},

		// R-CFG-4 URLs.
		{server(`{"type": "http", "url": "ftp://h/x"}`), x + ".url", "must start with https:// or http://"},
		{server(`{"type": "http", "url": "file:///etc/passwd"}`), x + ".url", "must start with https:// or http://"},
		{server(`{"type": "http", "url": "h.example/mcp"}`), x + ".url", "must start with https:// or http://"},
		{server(`{"type": "http", "url": "https:///mcp"}`), x + ".url", "a host is required"},
		{server(`{"type": "http", "url": "https://:443/mcp"}`), x + ".url", "a host is required"},
		{server(`{"type": "http", "url": "https:opaque"}`), x + ".url", "a host is required"},
		{server(`{"type": "http", "url": "https://user:pass@h/mcp"}`), x + ".url", "userinfo is not allowed: "},
		{server(`{"type": "http", "url": "https://user@h/mcp"}`), x + ".url", "userinfo is not allowed: "},
		{server(`{"type": "http", "url": "https://h/mcp#top"}`), x + ".url", "a fragment (#...) is not allowed"},
		{server(`{"type": "http", "url": "https://h/mcp#"}`), x + ".url", "a fragment (#...) is not allowed"},
		{server(`{"type": "http", "url": "https://h/a b"}`), x + ".url", "contains a space or control character"},
		{server(`{"type": "http", "url": "https://h:port/"}`), x + ".url", "is not a valid URL"},
		{server(`{"type": "http", "url": "${SCHEME}://h/"}`), x + ".url", "the scheme must be written out"},
		{server(`{"type": "http", "url": "https://${USER}:${PW}@h/"}`), x + ".url", "userinfo is not allowed"},
		{server(`{"type": "http", "url": "https://h/?k=${KEY"}`), x + ".url", "malformed placeholder at character 14"},
		{server(`{"type": "http", "url": "https://h/$"}`), x + ".url", "malformed placeholder"},

		// OAuth grants without a person.
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "password"}}`), x + ".oauth.grant", "must be client_credentials, jwt_bearer or token_exchange"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientSecret": {"env": "S"}}}`), x + ".oauth.clientId", "is needed by the client_credentials grant"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c"}}`), x + ".oauth", "needs clientSecret, privateKey or privateKeyFile"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKey": {"env": "K"}, "privateKeyFile": "/k"}}`), x + ".oauth", "set privateKey or privateKeyFile, not both"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKeyFile": "k.pem"}}`), x + ".oauth.privateKeyFile", "must be an absolute path"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKey": {"env": "-----BEGIN"}}}`), x + ".oauth.privateKey.env", "is not a valid environment variable name"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": {"env": "S"}, "authMethod": "private_key_jwt"}}`), x + ".oauth.authMethod", "needs privateKey or privateKeyFile"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": {"env": "S"}, "authMethod": "tls"}}`), x + ".oauth.authMethod", "must be client_secret_basic"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "jwt_bearer"}}`), x + ".oauth.tokenFile", "is needed by the jwt_bearer grant"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "token_exchange", "clientId": "c", "idTokenFile": "/t"}}`), x + ".oauth", "needs idpTokenUrl and idTokenFile"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"grant": "token_exchange", "clientId": "c", "idpTokenUrl": "http://idp.example/t", "idTokenFile": "/t"}}`), x + ".oauth.idpTokenUrl", "https"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"tokenFile": "/t"}}`), x + ".oauth", "need a grant"},

		// Variable and header names.
		{server(`{"type": "stdio", "command": "c", "env": {"1A": {"env": "B"}}}`), x + ".env.1A", "is not a valid environment variable name"},
		{server(`{"type": "stdio", "command": "c", "env": {"A": {"env": "my-token"}}}`), x + ".env.A.env", "is not a valid environment variable name"},
		{server(`{"type": "http", "url": "https://h", "bearerTokenEnvVar": "ghp_abc-123"}`), x + ".bearerTokenEnvVar", "is not a valid environment variable name"},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": {"env": "a.b"}}}`), x + ".headers.A.env", "is not a valid environment variable name"},
		{server(`{"type": "http", "url": "https://h", "headers": {"X Key": "v"}}`), x + `.headers["X Key"]`, "is not a valid HTTP header name"},
		{server(`{"type": "http", "url": "https://h", "headers": {"X:Key": "v"}}`), x + `.headers["X:Key"]`, "is not a valid HTTP header name"},
		{server(`{"type": "http", "url": "https://h", "headers": {"X-Key": "a", "x-key": "b"}}`), x + ".headers.x-key", `repeats header "X-Key"`},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": "v\r\nEvil: 1"}}`), x + ".headers.A", "contains a line break or control character"},
		{server(`{"type": "http", "url": "https://h", "headers": {"A": "Bearer ${T"}}`), x + ".headers.A", "malformed placeholder"},
		{server(`{"type": "http", "url": "https://h", "bearerTokenEnvVar": "T", "headers": {"authorization": "x"}}`), x + ".headers.authorization", "cannot be combined with bearerTokenEnvVar"},

		// Other server settings.
		{server(`{"type": "stdio", "command": "c", "enabledTools": ["a"], "disabledTools": ["b"]}`), x + ".disabledTools", "cannot be combined with enabledTools"},
		{server(`{"type": "stdio", "command": "c", "enabledTools": [""]}`), x + ".enabledTools[0]", "is empty"},
		{server(`{"type": "stdio", "command": "c", "instance": "global"}`), x + ".instance", `unknown instance mode "global"`},
		{server(`{"type": "stdio", "command": "c", "startupTimeoutMs": -1}`), x + ".startupTimeoutMs", "must not be negative"},
		{server(`{"type": "stdio", "command": "c", "callTimeoutMs": 9223372036854775807}`), x + ".callTimeoutMs", "is too large"},
		{server(`{"type": "stdio", "command": "c", "keepAliveMs": -1}`), x + ".keepAliveMs", "must not be negative"},
		{server(`{"type": "http", "url": "https://h", "keepAliveMs": 5}`), x + ".keepAliveMs", "is too small (at least 100)"},
		{server(`{"type": "stdio", "command": "c", "start": "lazy"}`), x + ".start", `unknown start mode "lazy": want eager or onDemand`},
		{server(`{"type": "stdio", "command": "c", "idleStopMs": -1}`), x + ".idleStopMs", "must not be negative"},
		{server(`{"type": "stdio", "command": "c", "installTimeoutMs": -1}`), x + ".installTimeoutMs", "must not be negative"},
		{server(`{"type": "stdio", "command": "c", "maxResultBytes": -1}`), x + ".maxResultBytes", "must not be negative"},
		{server(`{"type": "stdio", "command": "c", "maxRestartAttempts": -1}`), x + ".maxRestartAttempts", "must not be negative"},
		{`{"mcp": {"retryMs": -1}}`, "mcp.retryMs", "must not be negative"},
		{`{"mcp": {"callTimeoutMs": -1}}`, "mcp.callTimeoutMs", "must not be negative"},
		{`{"revision": -1}`, "revision", "must not be negative"},

		// OAuth.
		{server(`{"type": "http", "url": "https://h", "oauth": {"clientId": "c", "clientSecret": {"env": "x-y"}}}`), x + ".oauth.clientSecret.env", "is not a valid environment variable name"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"clientSecret": {"env": "S"}}}`), x + ".oauth.clientSecret", "needs clientId"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"authUrl": "https://a/auth"}}`), x + ".oauth", "set both authUrl and tokenUrl"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"authUrl": "http://a/x", "tokenUrl": "https://a/t"}}`), x + ".oauth.authUrl", "must use https"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"authUrl": "https://a/x", "tokenUrl": "https://u:p@a/t"}}`), x + ".oauth.tokenUrl", "userinfo is not allowed"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"scopes": ["read", "a b", ""]}}`), x + ".oauth.scopes[1]", "is not a valid OAuth scope"},
		{server(`{"type": "http", "url": "https://h", "oauth": {"scopes": [""]}}`), x + ".oauth.scopes[0]", "is not a valid OAuth scope"},

		// Profiles.
		{`{"mcp": {"profiles": {"p": {"servers": ["ghost"]}}}}`, "mcp.profiles.p.servers[0]", `unknown server "ghost"`},
		{`{"mcp": {"profiles": {"p": {"naming": "short"}}}}`, "mcp.profiles.p.naming", `unknown naming "short"`},
		{`{"mcp": {"profiles": {"p": {"naming": "bare"}}}}`, "mcp.profiles.p.naming", `"bare" needs exactly one server, got 0`},
		{`{"mcp": {"servers": {"a": {"type": "stdio", "command": "c"}, "b": {"type": "stdio", "command": "c"}},
		   "profiles": {"p": {"naming": "bare", "servers": ["a", "b"]}}}}`, "mcp.profiles.p.naming", `"bare" needs exactly one server, got 2`},
	}
	for _, tt := range tests {
		wantProblem(t, tt.in, problemsOf(t, tt.in), tt.path, tt.msg)
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, in := range []string{
		specExample,
		server(`{"type": "stdio", "command": "c", "args": ["", "$(not a shell)"], "instance": "per-session", "maxRestartAttempts": 0}`),
		server(`{"type": "sse", "url": "http://127.0.0.1:8080/sse", "instance": "shared"}`),
		server(`{"type": "http", "url": "http://[::1]:9000/mcp?a=b&c"}`),
		server(`{"type": "http", "url": "https://${HOST}/mcp/$PATH_PART?k=${KEY}&cost=$$5"}`),
		server(`{"type": "http", "url": "https://h", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Tab": "a\tb", "X-Ref": {"env": "_R1"}, "X-Empty": ""}}`),
		server(`{"type": "http", "url": "https://h", "enabled": false, "disabledTools": ["rm"], "enabledTools": []}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"clientId": "c", "clientSecret": {"env": "S"}, "authUrl": "http://localhost:9/a", "tokenUrl": "http://127.0.0.1:9/t", "scopes": ["read:all", "write"]}}`),
		`{"mcp": {"servers": {"A-b_9": {"type": "stdio", "command": "c"}}, "profiles": {"solo": {"servers": ["A-b_9"], "naming": "bare", "metaTools": true}, "all": {"naming": "plexus"}}}}`,
		`{"mcp": {"face": {"allowWrite": true, "allowExternalCall": false}}}`,
		`{"mcp": {"tracing": {"enabled": true, "protocol": "grpc"}}}`,
		`{"mcp": {"tracing": {"enabled": false}}}`,
		`{"mcp": {"policy": {"rules": [{"tool": "fs_write_*", "destructive": true, "action": "askEveryCall"}, {"client": "claude-*", "profile": "work", "action": "deny"}, {"action": "allow"}], "limits": [{"tool": "github_*", "client": "*", "calls": 30, "windowMs": 60000}]}}}`,
		`{"mcp": {"policy": {}}}`,
		`{"mcp": {"audit": {"enabled": false, "maxFileBytes": 1048576, "maxFiles": 3, "otlp": true}}}`,
		server(`{"type": "stdio", "command": "c", "auditPayloads": true}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": {"env": "S"}, "authMethod": "client_secret_post", "scopes": ["read"]}}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKeyFile": "/etc/plexus/key.pem", "signingAlg": "ES256"}}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"grant": "jwt_bearer", "clientId": "w", "tokenFile": "/var/run/secrets/tokens/mcp"}}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"grant": "token_exchange", "clientId": "c", "clientSecret": {"env": "S"}, "idpTokenUrl": "https://idp.example/token", "idpClientId": "i", "idpClientSecret": {"env": "I"}, "idTokenFile": "/run/id-token"}}`),
	} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("Decode(%s) = %v, want success", in, err)
		}
	}
}

// TestValidateStructs covers what JSON cannot express but Go code can.
func TestValidateStructs(t *testing.T) {
	f := &File{MCP: MCP{Servers: map[string]Server{"x": {
		Type: TypeHTTP, URL: "https://h",
		Headers: map[string]Value{"A": {Env: "E", Text: "t"}},
	}}}}
	err := Validate(f)
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 1 || e.Problems[0].Path != "mcp.servers.x.headers.A" {
		t.Errorf("Validate(both env and text) = %v", err)
	}
	if err := Validate(nil); err == nil {
		t.Error("Validate(nil) succeeded")
	}
	if err := Validate(&File{}); err != nil {
		t.Errorf("Validate(empty) = %v", err)
	}
}

// TestNoSecretsInErrors plants canaries where secrets end up by mistake and
// checks that no message repeats them (R-Q-4).
func TestNoSecretsInErrors(t *testing.T) {
	const canary = "CANARY7f3a"
	for _, in := range []string{
		server(`{"type": "http", "url": "https://u:CANARY7f3a@h/mcp"}`),
		server(`{"type": "http", "url": "https://h/mcp?key=CANARY7f3a#frag"}`),
		server(`{"type": "http", "url": "https://h/mcp?key=CANARY7f3a x"}`),
		server(`{"type": "http", "url": "https://h:CANARY7f3a/"}`),
		server(`{"type": "http", "url": "CANARY7f3a://h/"}`),
		server(`{"type": "http", "url": "https://h/?k=CANARY7f3a${"}`),
		server(`{"type": "http", "url": "https://h", "headers": {"A": "CANARY7f3a\n"}}`),
		server(`{"type": "http", "url": "https://h", "headers": {"A": "CANARY7f3a$"}}`),
		server(`{"type": "http", "url": "https://h", "bearerTokenEnvVar": "sk-CANARY7f3a"}`),
		server(`{"type": "stdio", "command": "c", "env": {"A": "CANARY7f3a"}}`),
		server(`{"type": "stdio", "command": "c", "env": {"A": {"env": "CANARY7f3a!"}}}`),
		server(`{"type": "http", "url": "https://h", "oauth": {"authUrl": "https://h/?s=CANARY7f3a#", "tokenUrl": "http://h/?s=CANARY7f3a"}}`),
	} {
		_, err := Decode([]byte(in))
		if err == nil {
			t.Errorf("Decode(%s) succeeded", in)
		} else if strings.Contains(err.Error(), canary) {
			t.Errorf("Decode(%s) leaks the canary:\n%v", in, err)
		}
	}
}

func TestRegistryURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://registry.example.com", ""},
		{"https://registry.example.com/base/", ""},
		{"http://127.0.0.1:8080", ""},
		{"http://registry.example.com", "must use https"},
		{"ftp://registry.example.com", "https://"},
		{"https://registry.example.com/?q=1", "without a query"},
		{"https://user:pw@registry.example.com", "userinfo"},
	} {
		f := &File{MCP: MCP{Registry: &Registry{URL: tc.url}}}
		err := Validate(f)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.url, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "mcp.registry.url") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want mcp.registry.url: …%s…", tc.url, err, tc.want)
		}
	}
	if got := (MCP{}).RegistryURL(); got != DefaultRegistryURL {
		t.Errorf("default registry = %q", got)
	}
	if got := (MCP{Registry: &Registry{URL: "https://r.example.com/x/"}}).RegistryURL(); got != "https://r.example.com/x" {
		t.Errorf("registry URL = %q", got)
	}
}
