package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fullFile sets every field of the schema; TestFullFileIsFull keeps it so.
func fullFile() *File {
	yes, no, three := true, false, 3
	return &File{
		Revision: 42,
		MCP: MCP{
			Enabled: &yes, RetryMs: 1000, CallTimeoutMs: 2000, OAuthClientMetadataURL: "https://plexus.example/oauth/client.json",
			Servers: map[string]Server{
				"local": {
					Type: TypeStdio, Command: "/bin/srv", Args: []string{"--x", "", "a b"}, Cwd: "/tmp",
					Env:     map[string]Ref{"TOKEN": {Env: "MY_TOKEN"}, "DEBUG": PlainValue("1")},
					Enabled: &no, EnabledTools: []string{"a", "b"}, StartupTimeoutMs: 5, CallTimeoutMs: 6, KeepAliveMs: 1000, Start: StartOnDemand, IdleStopMs: 7, InstallTimeoutMs: 8,
					Instance: InstancePerSession, MaxResultBytes: 1 << 30, MaxDescriptionChars: 9000, MaxRestartAttempts: &three,
					ProtocolVersion: "2025-06-18",
					AuditPayloads:   true,
					NpxDirect:       &no,
					Sandbox: &Sandbox{
						Filesystem: SandboxFilesystem{Read: []string{"/srv/docs"}, Write: []string{"~/notes"}},
						Network:    SandboxNetwork{Allow: []string{"api.github.com:443", "[::1]:5432"}},
						Limits:     &SandboxLimits{MemoryMb: 512, Processes: 64, OpenFiles: 256},
					},
				},
				"remote": {
					Type: TypeSSE, URL: "https://h.example/sse?k=${KEY}",
					Headers:           map[string]Value{"X-A": {Env: "A"}, "X-B": {Text: "<b> & $B"}},
					BearerTokenEnvVar: "BEARER", DisabledTools: []string{"rm"},
					OAuth: &OAuth{
						ClientID: "id", ClientSecret: &Ref{Env: "SECRET"},
						AuthURL: "https://as.example/auth", TokenURL: "https://as.example/token",
						Scopes: []string{"read", "write"},
						Grant:  GrantTokenExchange, AuthMethod: "private_key_jwt",
						PrivateKey: &Ref{Env: "KEY"}, SigningAlg: "ES256",
						TokenFile: "/token", IDPTokenURL: "https://idp.example/token", IDPClientID: "idp",
						IDPClientSecret: &Ref{Env: "IDP_SECRET"}, IDTokenFile: "/id-token",
					},
				},
				// A key is a secret or a file, not both: this one has the file.
				"machine": {
					Type: TypeHTTP, URL: "https://m.example/mcp",
					OAuth: &OAuth{Grant: GrantClientCredentials, ClientID: "m", PrivateKeyFile: "/k.pem"},
				},
			},
			Face: &Face{AllowWrite: true, AllowExternalCall: true, SessionIdleMs: 60000, MaxSessions: 50},
			Profiles: map[string]Profile{"solo": {Servers: []string{"remote"}, Naming: NamingBare, MetaTools: true, ControlTools: &yes,
				Users: []string{"ada@example.com"}, Groups: []string{"eng"}}},
			Registry: &Registry{URL: "https://registry.example.com"},
			Tracing:  &Tracing{Enabled: true, Protocol: TracingGRPC},
			Policy: &Policy{
				Rules:  []PolicyRule{{Tool: "fs_*", Client: "claude-*", Profile: "work", Destructive: &yes, Action: PolicyAskOnce}},
				Limits: []RateLimit{{Tool: "github_*", Client: "*", Calls: 30, WindowMs: 60000}},
			},
			Audit: &Audit{Enabled: &yes, MaxFileBytes: 1 << 20, MaxFiles: 3, OTLP: true},
			Names: NamesHashed,
		},
		Team: &Team{Resource: "https://plexus.example.com/mcp", Issuers: []string{"https://idp.example.com"},
			UserClaim: "email", GroupsClaim: "roles", Scopes: []string{"mcp"}},
	}
}

// TestFullFileIsFull fails when a field is added to the schema but not to
// fullFile, which would leave it out of the round-trip and Clone tests.
func TestFullFileIsFull(t *testing.T) {
	f := fullFile()
	check := func(name string, v any) {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if rv.Field(i).IsZero() {
				t.Errorf("fullFile leaves %s.%s zero", name, rv.Type().Field(i).Name)
			}
		}
	}
	check("File", *f)
	check("MCP", f.MCP)
	merged := f.MCP.Servers["local"]
	remote := f.MCP.Servers["remote"]
	// A server is stdio or remote, so the union of the two must be full.
	mv, rv := reflect.ValueOf(&merged).Elem(), reflect.ValueOf(remote)
	for i := range mv.NumField() {
		if mv.Field(i).IsZero() {
			mv.Field(i).Set(rv.Field(i))
		}
	}
	check("Server", merged)
	oauth := *remote.OAuth
	oauth.PrivateKeyFile = f.MCP.Servers["machine"].OAuth.PrivateKeyFile
	check("OAuth", oauth)
	check("Face", *f.MCP.Face)
	check("Profile", f.MCP.Profiles["solo"])
}

func TestEncodeGolden(t *testing.T) {
	f, err := Decode([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "revision": 0,
  "mcp": {
    "enabled": true,
    "retryMs": 30000,
    "callTimeoutMs": 60000,
    "servers": {
      "docs": {
        "type": "stdio",
        "command": "/usr/local/bin/docs-mcp",
        "args": [
          "--root",
          "/srv/docs"
        ],
        "cwd": "/srv/docs",
        "env": {
          "DOCS_TOKEN": {
            "env": "MY_DOCS_TOKEN"
          }
        }
      },
      "search": {
        "type": "http",
        "url": "https://mcp.example.com/mcp?team=${TEAM}",
        "headers": {
          "X-Api-Key": {
            "env": "SEARCH_KEY"
          }
        },
        "bearerTokenEnvVar": "MY_SEARCH_TOKEN",
        "enabledTools": [
          "search"
        ],
        "callTimeoutMs": 30000
      }
    }
  }
}
`
	if string(got) != want {
		t.Errorf("Encode(spec example) =\n%s\nwant\n%s", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	full, err := Encode(fullFile())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(full), `"<b> & $B"`) {
		t.Errorf("Encode escapes HTML:\n%s", full)
	}
	for _, in := range []string{
		"", "{}", specExample, string(full),
		`{"mcp": {"enabled": false, "face": {}, "profiles": {"p": {}}}}`,
		server(`{"type": "http", "url": "https://h", "oauth": {}, "headers": {"A": ""}, "maxRestartAttempts": 0}`),
		server(`{"type": "stdio", "command": "c", "args": [], "env": {}, "enabledTools": [], "enabled": true}`),
		server(`{"type": "stdio", "command": "\u00e9\t\"\\\u2028<>&"}`),
		server(`{"type": "stdio", "command": "c", "env": {"DEBUG": {"value": "1"}, "EMPTY": {"value": ""}, "T": {"env": "T"}}}`),
	} {
		f1, err := Decode([]byte(in))
		if err != nil {
			t.Fatalf("Decode(%s) = %v", in, err)
		}
		b1, err := Encode(f1)
		if err != nil {
			t.Fatalf("Encode(%+v) = %v", f1, err)
		}
		f2, err := Decode(b1)
		if err != nil {
			t.Fatalf("Decode(Encode(%s)) = %v\n%s", in, err, b1)
		}
		if !reflect.DeepEqual(f1, f2) {
			t.Errorf("round trip of %s changed it:\n%+v\n%+v", in, f1, f2)
		}
		if b2, _ := Encode(f2); !bytes.Equal(b1, b2) {
			t.Errorf("Encode is not stable for %s:\n%s\n%s", in, b1, b2)
		}
	}
	if f, err := Decode(full); err != nil || !reflect.DeepEqual(f, fullFile()) {
		t.Errorf("Decode(Encode(fullFile())) = %+v, %v", f, err)
	}
}

func TestEncodeNil(t *testing.T) {
	if _, err := Encode(nil); err == nil {
		t.Error("Encode(nil) succeeded")
	}
}

func TestValueJSON(t *testing.T) {
	for _, tt := range []struct {
		v    Value
		json string
	}{
		{Value{Text: "Bearer ${T}"}, `"Bearer ${T}"`},
		{Value{Text: ""}, `""`},
		{Value{Env: "VAR"}, `{"env":"VAR"}`},
	} {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.v, b, err, tt.json)
		}
		var v Value
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil || v != tt.v {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tt.json, v, err, tt.v)
		}
	}
	if _, err := json.Marshal(Value{Env: "A", Text: "b"}); err == nil {
		t.Error("Marshal(Value with env and text) succeeded")
	}
	for _, bad := range []string{`5`, `[]`, `true`, `{}`, `{"env": ""}`, `{"env": "A", "x": 1}`, `{"env": 1}`} {
		var v Value
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, v)
		}
	}
	// Through a struct, as the settings API decodes servers.
	var s Server
	if err := json.Unmarshal([]byte(`{"headers": {"A": {"env": "X"}, "B": "t", "C": null}}`), &s); err != nil {
		t.Fatal(err)
	}
	if want := map[string]Value{"A": {Env: "X"}, "B": {Text: "t"}, "C": {}}; !reflect.DeepEqual(s.Headers, want) {
		t.Errorf("headers = %+v, want %+v", s.Headers, want)
	}
}
