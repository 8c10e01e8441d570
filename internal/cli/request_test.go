package cli

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// sameJSON compares JSON documents by value.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// TestAddRequests checks that every form of `add` sends the server's
// settings in the shape of extensions.json (R-CFG, docs/requirements.md).
func TestAddRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // the request body
	}{
		{
			name: "exact argv",
			args: []string{"add", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/docs"]}}`,
		},
		{
			name: "command line with quotes",
			args: []string{"add", "fs", "--command", `npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"`},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/my docs"]}}`,
		},
		{
			name: "argv words that look like flags stay arguments",
			args: []string{"add", "fs", "--no-verify", "--", "srv", "--port", "3", "-h", "--"},
			want: `{"name":"fs","noVerify":true,"config":{"type":"stdio","command":"srv","args":["--port","3","-h","--"]}}`,
		},
		{
			name: "command alone",
			args: []string{"add", "solo", "--", "/usr/local/bin/docs-mcp"},
			want: `{"name":"solo","config":{"type":"stdio","command":"/usr/local/bin/docs-mcp"}}`,
		},
		{
			name: "stdio with every option",
			args: []string{"add", "gh", "--env", "GITHUB_TOKEN=MY_GH", "--env", "LOG=LOG_LEVEL", "--cwd", "/srv", "--call-timeout", "5000",
				"--startup-timeout", "9000", "--enabled-tools", "a,b", "--disabled", "--no-verify", "--", "gh-mcp", "stdio"},
			want: `{"name":"gh","noVerify":true,"config":{"type":"stdio","command":"gh-mcp","args":["stdio"],"cwd":"/srv",
				"env":{"GITHUB_TOKEN":{"env":"MY_GH"},"LOG":{"env":"LOG_LEVEL"}},"callTimeoutMs":5000,"startupTimeoutMs":9000,
				"enabledTools":["a","b"],"enabled":false}}`,
		},
		{
			name: "http with headers and bearer",
			args: []string{"add", "search", "https://mcp.example.com/mcp?team=${TEAM}", "--header", "X-Api-Key=SEARCH_KEY",
				"--header", "X-Trace=id ${TRACE_ID}", "--bearer-env", "MY_SEARCH_TOKEN", "--disabled-tools", "delete"},
			want: `{"name":"search","config":{"type":"http","url":"https://mcp.example.com/mcp?team=${TEAM}",
				"headers":{"X-Api-Key":{"env":"SEARCH_KEY"},"X-Trace":"id ${TRACE_ID}"},"bearerTokenEnvVar":"MY_SEARCH_TOKEN",
				"disabledTools":["delete"]}}`,
		},
		{
			name: "client credentials grant",
			args: []string{"add", "billing", "https://billing.example.com/mcp", "--oauth-grant", "client_credentials",
				"--client-id", "plexus", "--client-secret-env", "BILLING_SECRET", "--client-auth", "client_secret_post", "--oauth-scopes", "read,write"},
			want: `{"name":"billing","config":{"type":"http","url":"https://billing.example.com/mcp","oauth":{"grant":"client_credentials",
				"clientId":"plexus","clientSecret":{"env":"BILLING_SECRET"},"authMethod":"client_secret_post","scopes":["read","write"]}}}`,
		},
		{
			name: "private_key_jwt, workload and enterprise settings",
			args: []string{"add", "corp", "https://corp.example.com/mcp", "--oauth-grant", "token_exchange", "--client-id", "app",
				"--private-key-env", "APP_KEY", "--idp-token-url", "https://idp.example/token", "--idp-client-id", "idp",
				"--idp-client-secret-env", "IDP_SECRET", "--id-token-file", "/run/id-token", "--token-file", "/run/t", "--private-key-file", "/k.pem", "--signing-alg", "ES256"},
			want: `{"name":"corp","config":{"type":"http","url":"https://corp.example.com/mcp","oauth":{"grant":"token_exchange",
				"clientId":"app","privateKey":{"env":"APP_KEY"},"idpTokenUrl":"https://idp.example/token","idpClientId":"idp",
				"idpClientSecret":{"env":"IDP_SECRET"},"idTokenFile":"/run/id-token","tokenFile":"/run/t","privateKeyFile":"/k.pem","signingAlg":"ES256"}}}`,
		},
		{
			name: "sse, flags before the URL",
			args: []string{"add", "--transport", "sse", "legacy", "https://old.example.com/sse"},
			want: `{"name":"legacy","config":{"type":"sse","url":"https://old.example.com/sse"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, map[string]reply{
				"POST /v1/servers": {201, `{"revision":2,"server":{"name":"x","state":"ready","tools":3}}`},
			})
			// Progress shows at once here, so that the test can see it.
			defer func(d time.Duration) { progressDelay = d }(progressDelay)
			progressDelay = 0
			r := run(t, "", tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			req := f.request(t, "POST")
			if !sameJSON(t, req.body, tc.want) {
				t.Errorf("sent %s\nwant %s", req.body, tc.want)
			}
			if req.ifMatch != "" {
				t.Errorf("add sent If-Match %q", req.ifMatch)
			}
			if want := "added " + tc.args[len(tc.args)-1]; !strings.HasPrefix(r.stdout, "added ") || !strings.HasSuffix(r.stdout, "(ready, 3 tools)\n") {
				t.Errorf("stdout %q, want %q…", r.stdout, want)
			}
			progress := !slices.Contains(tc.args, "--no-verify") && !slices.Contains(tc.args, "--disabled")
			if got := strings.Contains(r.stderr, "starting"); got != progress {
				t.Errorf("progress on stderr: %q, want it: %v", r.stderr, progress)
			}
		})
	}
}

const (
	storedStdio = `{"revision":7,"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","pkg"],
		"env":{"A":{"env":"B"}},"cwd":"/srv","callTimeoutMs":30000,"maxResultBytes":1048576,"instance":"shared"}}`
	storedHTTP = `{"revision":7,"name":"search","config":{"type":"http","url":"https://x.example/mcp",
		"headers":{"X-Api-Key":{"env":"K"},"X-Old":"v ${V}"},"bearerTokenEnvVar":"T","enabledTools":["a"]}}`
)

// TestEditRequests checks that `edit` changes only what its flags say and
// bases the write on the revision it read.
func TestEditRequests(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		want   string // the PUT body
		stderr string // a warning expected on stderr
	}{
		{
			name: "command line",
			args: []string{"edit", "fs", "--command", `npx -y other "/srv/my docs"`},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","other","/srv/my docs"],
				"env":{"A":{"env":"B"}},"cwd":"/srv","callTimeoutMs":30000,"maxResultBytes":1048576,"instance":"shared"}}`,
		},
		{
			name: "exact argv",
			args: []string{"edit", "fs", "--", "/bin/srv", "--flag"},
			want: `{"name":"fs","config":{"type":"stdio","command":"/bin/srv","args":["--flag"],
				"env":{"A":{"env":"B"}},"cwd":"/srv","callTimeoutMs":30000,"maxResultBytes":1048576,"instance":"shared"}}`,
		},
		{
			name: "env and cwd",
			args: []string{"edit", "fs", "--env", "C=D", "--rm-env", "A", "--cwd", ""},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","pkg"],
				"env":{"C":{"env":"D"}},"callTimeoutMs":30000,"maxResultBytes":1048576,"instance":"shared"}}`,
		},
		{
			name: "timeouts",
			args: []string{"edit", "fs", "--call-timeout", "0", "--startup-timeout", "100"},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","pkg"],
				"env":{"A":{"env":"B"}},"cwd":"/srv","startupTimeoutMs":100,"maxResultBytes":1048576,"instance":"shared"}}`,
		},
		{
			name: "times with their unit",
			args: []string{"edit", "fs", "--startup-timeout", "1m30s", "--idle-stop", "5m", "--install-timeout", "250ms"},
			want: `{"name":"fs","config":{"type":"stdio","command":"npx","args":["-y","pkg"],
				"env":{"A":{"env":"B"}},"cwd":"/srv","callTimeoutMs":30000,"startupTimeoutMs":90000,"installTimeoutMs":250,
				"idleStopMs":300000,"maxResultBytes":1048576,"instance":"shared"}}`,
		},
		{
			name:   "stdio to http",
			args:   []string{"edit", "fs", "--url", "https://new.example/mcp"},
			want:   `{"name":"fs","config":{"type":"http","url":"https://new.example/mcp","callTimeoutMs":30000,"maxResultBytes":1048576,"instance":"shared"}}`,
			stderr: "warning: the server changes from stdio to http: its command, args, cwd and env settings are dropped",
		},
		{
			name: "headers replace ignoring case, and remove",
			args: []string{"edit", "search", "--header", "x-api-key=NEW_K", "--rm-header", "x-old"},
			want: `{"name":"search","config":{"type":"http","url":"https://x.example/mcp","headers":{"x-api-key":{"env":"NEW_K"}},
				"bearerTokenEnvVar":"T","enabledTools":["a"]}}`,
		},
		{
			name: "remove bearer, last header",
			args: []string{"edit", "search", "--bearer-env", "-", "--rm-header", "X-Api-Key", "--rm-header", "X-Old"},
			want: `{"name":"search","config":{"type":"http","url":"https://x.example/mcp","enabledTools":["a"]}}`,
		},
		{
			name: "transport",
			args: []string{"edit", "search", "--transport", "sse", "--url", "https://x.example/sse"},
			want: `{"name":"search","config":{"type":"sse","url":"https://x.example/sse","headers":{"X-Api-Key":{"env":"K"},"X-Old":"v ${V}"},
				"bearerTokenEnvVar":"T","enabledTools":["a"]}}`,
		},
		{
			name: "tool lists",
			args: []string{"edit", "search", "--enabled-tools", "", "--disabled-tools", "b,c", "--no-verify"},
			want: `{"name":"search","noVerify":true,"config":{"type":"http","url":"https://x.example/mcp","headers":{"X-Api-Key":{"env":"K"},"X-Old":"v ${V}"},
				"bearerTokenEnvVar":"T","disabledTools":["b","c"]}}`,
		},
		{
			name:   "http to stdio",
			args:   []string{"edit", "search", "--command", "srv x"},
			want:   `{"name":"search","config":{"type":"stdio","command":"srv","args":["x"],"enabledTools":["a"]}}`,
			stderr: "its url, headers and bearerTokenEnvVar settings are dropped",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, map[string]reply{
				"GET /v1/servers/fs":     {200, storedStdio},
				"GET /v1/servers/search": {200, storedHTTP},
				"PUT /v1/servers/fs":     {200, `{"revision":8,"server":{"name":"fs","state":"ready","tools":1}}`},
				"PUT /v1/servers/search": {200, `{"revision":8,"server":{"name":"search","state":"ready","tools":1}}`},
			})
			r := run(t, "", tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			req := f.request(t, "PUT")
			if !sameJSON(t, req.body, tc.want) {
				t.Errorf("sent %s\nwant %s", req.body, tc.want)
			}
			if req.ifMatch != "7" {
				t.Errorf("If-Match %q, want the revision read, 7", req.ifMatch)
			}
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.stderr)
			}
			if want := "updated " + tc.args[1] + " (ready, 1 tool)\n"; r.stdout != want {
				t.Errorf("stdout %q, want %q", r.stdout, want)
			}
		})
	}
}

// TestEditKeepsNumbers checks that values the CLI does not touch are sent
// back exactly, large integers included.
func TestEditKeepsNumbers(t *testing.T) {
	f := startFake(t, map[string]reply{
		"GET /v1/servers/fs": {200, `{"revision":3,"config":{"type":"stdio","command":"x","maxResultBytes":9007199254740993}}`},
		"PUT /v1/servers/fs": {200, `{"revision":4}`},
	})
	if r := run(t, "", "edit", "fs", "--cwd", "/tmp"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if body := f.request(t, "PUT").body; !strings.Contains(body, "9007199254740993") {
		t.Errorf("number changed: %s", body)
	}
}
