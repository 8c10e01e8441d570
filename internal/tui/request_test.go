package tui

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBuildPlan: what the form sends for each way of filling it in.
func TestBuildPlan(t *testing.T) {
	stored := map[string]any{"type": "http", "url": "https://old.example.com/mcp", "bearerTokenEnvVar": "WEB_TOKEN",
		"headers":       map[string]any{"X-Api-Key": map[string]any{"env": "WEB_X_API_KEY"}, "X-Team": "${TEAM}"},
		"callTimeoutMs": json.Number("5000")}
	for _, tc := range []struct {
		name    string
		v       formValues
		base    map[string]any
		want    string // the config, as JSON
		secrets map[string]string
		forget  []string
		err     string
	}{
		{name: "http with secrets", v: formValues{transport: "http", url: " https://mcp.example.com/mcp ", name: "search", bearer: "tok", headerName: "X-Api-Key", headerValue: "key"},
			want:    `{"bearerTokenEnvVar":"SEARCH_TOKEN","headers":{"X-Api-Key":{"env":"SEARCH_X_API_KEY"}},"type":"http","url":"https://mcp.example.com/mcp"}`,
			secrets: map[string]string{"SEARCH_TOKEN": "tok", "SEARCH_X_API_KEY": "key"}},
		{name: "stdio quoted", v: formValues{transport: "stdio", command: `npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`, name: "fs", env: "A=1 B=two"},
			want:    `{"args":["-y","@modelcontextprotocol/server-filesystem","/srv/my docs"],"command":"npx","env":{"A":{"env":"FS_A"},"B":{"env":"FS_B"}},"type":"stdio"}`,
			secrets: map[string]string{"FS_A": "1", "FS_B": "two"}},
		{name: "edit, blanks keep", v: formValues{transport: "http", url: "https://new.example.com/mcp", name: "web", headerName: "X-Api-Key"}, base: stored,
			want: `{"bearerTokenEnvVar":"WEB_TOKEN","callTimeoutMs":5000,"headers":{"X-Api-Key":{"env":"WEB_X_API_KEY"},"X-Team":"${TEAM}"},"type":"http","url":"https://new.example.com/mcp"}`},
		{name: "edit, - removes", v: formValues{transport: "http", url: "https://old.example.com/mcp", name: "web", bearer: "-", headerName: "X-Api-Key", headerValue: "-"}, base: stored,
			want:   `{"callTimeoutMs":5000,"headers":{"X-Team":"${TEAM}"},"type":"http","url":"https://old.example.com/mcp"}`,
			forget: []string{"WEB_TOKEN", "WEB_X_API_KEY"}},
		{name: "edit, header renamed keeps its value", v: formValues{transport: "http", url: "https://old.example.com/mcp", name: "web", headerName: "X-Key"}, base: stored,
			want: `{"bearerTokenEnvVar":"WEB_TOKEN","callTimeoutMs":5000,"headers":{"X-Key":{"env":"WEB_X_API_KEY"},"X-Team":"${TEAM}"},"type":"http","url":"https://old.example.com/mcp"}`},
		{name: "edit to stdio drops the remote keys", v: formValues{transport: "stdio", command: "docs-mcp", name: "web"}, base: stored,
			want: `{"callTimeoutMs":5000,"command":"docs-mcp","type":"stdio"}`},
		{name: "env - removes all", v: formValues{transport: "stdio", command: "x", name: "fs", env: " - "},
			base: map[string]any{"type": "stdio", "command": "x", "env": map[string]any{"A": map[string]any{"env": "FS_A"}, "B": map[string]any{"env": "SHARED"}}},
			want: `{"command":"x","type":"stdio"}`, forget: []string{"FS_A"}},
		{name: "env KEY=- removes one", v: formValues{transport: "stdio", command: "x", name: "fs", env: "A=- C=3"},
			base: map[string]any{"type": "stdio", "command": "x", "env": map[string]any{"A": map[string]any{"env": "FS_A"}, "B": map[string]any{"env": "SHARED"}}},
			want: `{"command":"x","env":{"B":{"env":"SHARED"},"C":{"env":"FS_C"}},"type":"stdio"}`, secrets: map[string]string{"FS_C": "3"}, forget: []string{"FS_A"}},
		{name: "env of a plain value stays plain", v: formValues{transport: "stdio", command: "x", name: "fs", env: "DEBUG=2 T=s3cr3t"},
			base: map[string]any{"type": "stdio", "command": "x", "env": map[string]any{"DEBUG": map[string]any{"value": "1"}}},
			want: `{"command":"x","env":{"DEBUG":{"value":"2"},"T":{"env":"FS_T"}},"type":"stdio"}`, secrets: map[string]string{"FS_T": "s3cr3t"}},
		{name: "no name", v: formValues{transport: "http", url: "https://x.example.com"}, err: "name:"},
		{name: "not a URL", v: formValues{transport: "http", url: "npx foo", name: "x"}, err: "url:"},
		{name: "no command", v: formValues{transport: "stdio", name: "x"}, err: "command:"},
		{name: "shell operator", v: formValues{transport: "stdio", command: "a | b", name: "x"}, err: "command:"},
		{name: "header value without name", v: formValues{transport: "http", url: "https://x.example.com", name: "x", headerValue: "v"}, err: "header:"},
		{name: "new header without value", v: formValues{transport: "http", url: "https://x.example.com", name: "x", headerName: "X-A"}, err: "give its value"},
		{name: "bad header name", v: formValues{transport: "http", url: "https://x.example.com", name: "x", headerName: "X A", headerValue: "v"}, err: "not a valid"},
		{name: "bad env", v: formValues{transport: "stdio", command: "x", name: "x", env: "A=1 secretvalue"}, err: "entry 2 is not KEY=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := buildPlan(tc.v, tc.base)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(decode(t, p.req.Config)); string(got) != tc.want {
				t.Errorf("config\n got %s\nwant %s", got, tc.want)
			}
			if !maps.Equal(p.req.Secrets, tc.secrets) {
				t.Errorf("secrets %v, want %v", p.req.Secrets, tc.secrets)
			}
			slices.Sort(p.forget)
			if !slices.Equal(p.forget, tc.forget) {
				t.Errorf("forget %v, want %v", p.forget, tc.forget)
			}
		})
	}
	if stored["bearerTokenEnvVar"] != "WEB_TOKEN" || len(stored["headers"].(map[string]any)) != 2 {
		t.Fatal("buildPlan changed the stored settings it was given")
	}
}

// FuzzForm: whatever is typed, the form builds a request or says which
// field is wrong, and an error never repeats a secret typed.
func FuzzForm(f *testing.F) {
	f.Add("stdio", `npx -y "a b"`, "n", "", "", "", "A=secret B=-")
	f.Add("http", "https://mcp.example.com/mcp", "n", "tok", "X-Api-Key", "val", "")
	f.Add("http", "http://x", "", "-", "", "-", "")
	f.Add("stdio", "a | b", "n", "", "", "", "=nokey secret")
	f.Fuzz(func(t *testing.T, transport, target, name, bearer, headerName, headerValue, env string) {
		v := formValues{transport: transport, url: target, command: target, name: name, bearer: bearer,
			headerName: headerName, headerValue: headerValue, env: env}
		p, err := buildPlan(v, map[string]any{"headers": map[string]any{"X-Old": map[string]any{"env": "N_X_OLD"}}})
		if err != nil {
			for _, s := range []string{bearer, headerValue} {
				if len(s) > 3 && strings.Contains(err.Error(), s) {
					t.Fatalf("the error %q repeats a secret %q", err, s)
				}
			}
			entries, _, _ := parseEnv(env)
			for _, e := range entries {
				if len(e.value) > 3 && strings.Contains(err.Error(), e.value) {
					t.Fatalf("the error %q repeats an env value", err)
				}
			}
			return
		}
		var cfg map[string]any
		if err := json.Unmarshal(p.req.Config, &cfg); err != nil {
			t.Fatalf("the config is not JSON: %v", err)
		}
		for ref, val := range p.req.Secrets {
			if val == "" || val == removeMark {
				t.Fatalf("secret %s sent as %q", ref, val)
			}
			if strings.Contains(string(p.req.Config), val) && len(val) > 3 && !strings.Contains(target+name+headerName, val) {
				t.Fatalf("a secret value is in the config: %s", p.req.Config)
			}
		}
	})
}
