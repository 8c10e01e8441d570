package tui

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestBuildPlanGrantAndSandbox: what the form's OAuth and sandbox rows
// send: a grant's settings with its secrets named for the server, a
// grant's settings dropped when another is chosen, a pasted PEM given its
// lines back, and the sandbox's folders and network.
func TestBuildPlanGrantAndSandbox(t *testing.T) {
	const pem = "-----BEGIN PRIVATE KEY----- MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg AbCd -----END PRIVATE KEY-----"
	storedTX := map[string]any{"type": "http", "url": "https://x.example.com/mcp", "oauth": map[string]any{
		"grant": "token_exchange", "clientId": "c", "idpTokenUrl": "https://idp.example.com/token", "idTokenFile": "/run/id",
		"idpClientSecret": map[string]any{"env": "X_IDP_CLIENT_SECRET"}, "tokenUrl": "https://as.example.com/token"}}
	for _, tc := range []struct {
		name    string
		v       formValues
		base    map[string]any
		want    string
		secrets map[string]string
		forget  []string
	}{
		{name: "client credentials, post", v: formValues{transport: "http", url: "https://m.example.com/mcp", name: "m2m",
			oauth: map[string]string{"grant": "client_credentials", "clientId": "plexus", "authMethod": "client_secret_post", "clientSecret": "s3cret", "scopes": "read, write"}},
			want:    `{"oauth":{"authMethod":"client_secret_post","clientId":"plexus","clientSecret":{"env":"M2M_CLIENT_SECRET"},"grant":"client_credentials","scopes":["read","write"]},"type":"http","url":"https://m.example.com/mcp"}`,
			secrets: map[string]string{"M2M_CLIENT_SECRET": "s3cret"}},
		{name: "private key pasted on one line", v: formValues{transport: "http", url: "https://m.example.com/mcp", name: "k",
			oauth: map[string]string{"grant": "client_credentials", "clientId": "plexus", "authMethod": "private_key_jwt", "privateKey": pem, "privateKeyFile": ""}},
			want:    `{"oauth":{"authMethod":"private_key_jwt","clientId":"plexus","grant":"client_credentials","privateKey":{"env":"K_PRIVATE_KEY"}},"type":"http","url":"https://m.example.com/mcp"}`,
			secrets: map[string]string{"K_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\nAbCd\n-----END PRIVATE KEY-----\n"}},
		{name: "edit, blank keeps the stored secret", base: storedTX, v: formValues{transport: "http", url: "https://x.example.com/mcp", name: "x",
			oauth: map[string]string{"grant": "token_exchange", "clientId": "c", "clientSecret": "", "idpTokenUrl": "https://idp.example.com/token", "idpClientId": "", "idpClientSecret": "", "idTokenFile": "/run/id"}},
			want: `{"oauth":{"clientId":"c","grant":"token_exchange","idTokenFile":"/run/id","idpClientSecret":{"env":"X_IDP_CLIENT_SECRET"},"idpTokenUrl":"https://idp.example.com/token","tokenUrl":"https://as.example.com/token"},"type":"http","url":"https://x.example.com/mcp"}`},
		{name: "edit to a browser login drops the grant's settings", base: storedTX, v: formValues{transport: "http", url: "https://x.example.com/mcp", name: "x",
			oauth: map[string]string{"clientId": "", "clientSecret": "", "scopes": ""}},
			want: `{"oauth":{"tokenUrl":"https://as.example.com/token"},"type":"http","url":"https://x.example.com/mcp"}`, forget: []string{"X_IDP_CLIENT_SECRET"}},
		{name: "sandbox with folders and ports", v: formValues{transport: "stdio", command: "srv", name: "fs",
			sandbox: sandboxValues{on: true, read: `~/docs "/srv/my docs"`, write: "/tmp/out", nets: "127.0.0.1:5432, api.github.com:443"}},
			want: `{"command":"srv","sandbox":{"filesystem":{"read":["~/docs","/srv/my docs"],"write":["/tmp/out"]},"network":["127.0.0.1:5432","api.github.com:443"]},"type":"stdio"}`},
		{name: "sandbox strict", v: formValues{transport: "stdio", command: "srv", name: "fs", sandbox: sandboxValues{on: true}},
			want: `{"command":"srv","sandbox":{"network":"none"},"type":"stdio"}`},
		{name: "sandbox off keeps nothing", v: formValues{transport: "stdio", command: "srv", name: "fs"},
			base: map[string]any{"type": "stdio", "command": "srv", "sandbox": map[string]any{"network": "all"}},
			want: `{"command":"srv","type":"stdio"}`},
		{name: "sandbox edit keeps its limits", v: formValues{transport: "stdio", command: "srv", name: "fs", sandbox: sandboxValues{on: true, nets: "all"}},
			base: map[string]any{"type": "stdio", "command": "srv", "sandbox": map[string]any{"network": "none", "limits": map[string]any{"memoryMb": json.Number("512")}}},
			want: `{"command":"srv","sandbox":{"limits":{"memoryMb":512},"network":"all"},"type":"stdio"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := buildPlan(tc.v, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(decode(t, p.req.Config)); string(got) != tc.want {
				t.Errorf("config\n got %s\nwant %s", got, tc.want)
			}
			if !maps.Equal(p.req.Secrets, tc.secrets) {
				t.Errorf("secrets %q, want %q", p.req.Secrets, tc.secrets)
			}
			if !slices.Equal(p.forget, tc.forget) {
				t.Errorf("forget %v, want %v", p.forget, tc.forget)
			}
		})
	}
	if o := storedTX["oauth"].(map[string]any); o["grant"] != "token_exchange" || len(o) != 6 {
		t.Fatal("buildPlan changed the stored settings it was given")
	}
	if _, err := buildPlan(formValues{transport: "stdio", command: "srv", name: "fs", sandbox: sandboxValues{on: true, read: `"open`}}, nil); err == nil || !strings.HasPrefix(err.Error(), "may read:") {
		t.Errorf("an open quote in the folders: %v", err)
	}
}

// FuzzGrantAndSandboxRows: whatever is typed or pasted into the OAuth and
// sandbox rows, the form builds a request or says which row is wrong; a
// secret typed is sent only as a managed secret, never in the config nor
// in an error.
func FuzzGrantAndSandboxRows(f *testing.F) {
	f.Add("client_credentials", "plexus", "private_key_jwt", "-----BEGIN PRIVATE KEY----- QUJD REVG -----END PRIVATE KEY-----", "s3cret-value", "read,write", `~/a "/b c"`, "all")
	f.Add("token_exchange", "", "", "", "-", "", `"open`, "127.0.0.1:1 x:2")
	f.Add("", "c", "client_secret_basic", "not a pem", "", " , ", "", "")
	f.Fuzz(func(t *testing.T, grant, clientID, method, key, secret, scopes, read, nets string) {
		base := map[string]any{"type": "http", "url": "https://x.example.com/mcp",
			"oauth": map[string]any{"clientSecret": map[string]any{"env": "X_CLIENT_SECRET"}, "tokenUrl": "https://as.example.com/t"}}
		for _, v := range []formValues{
			{transport: "http", url: "https://x.example.com/mcp", name: "x", oauth: map[string]string{"grant": grant, "clientId": clientID,
				"authMethod": method, "privateKey": key, "clientSecret": secret, "idpClientSecret": secret, "scopes": scopes}},
			{transport: "stdio", command: "srv", name: "x", sandbox: sandboxValues{on: true, read: read, write: read, nets: nets}},
		} {
			p, err := buildPlan(v, base)
			if err != nil {
				for _, s := range []string{key, secret} {
					if len(s) > 3 && strings.Contains(err.Error(), s) {
						t.Fatalf("the error %q repeats a secret", err)
					}
				}
				continue
			}
			var cfg map[string]any
			if err := json.Unmarshal(p.req.Config, &cfg); err != nil {
				t.Fatalf("the config is not JSON: %v", err)
			}
			for ref, val := range p.req.Secrets {
				if strings.TrimSpace(val) == "" || strings.TrimSpace(val) == removeMark {
					t.Fatalf("secret %s sent as %q", ref, val)
				}
				if len(val) > 8 && strings.Contains(string(p.req.Config), val) && !strings.Contains(grant+clientID+method+scopes+read+nets, val) {
					t.Fatalf("a secret value is in the config: %s", p.req.Config)
				}
			}
		}
	})
}
