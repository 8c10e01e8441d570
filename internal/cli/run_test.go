package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func TestDaemonNotRunning(t *testing.T) {
	home := shortTempDir(t)
	t.Setenv("PLEXUS_HOME", home)
	for _, args := range [][]string{{"ls"}, {"add", "fs", "https://x.example"}, {"secret", "ls"}} {
		r := run(t, "", args...)
		if r.code != ExitError {
			t.Errorf("%v: exit %d, want 1", args, r.code)
		}
		if r.stdout != "" {
			t.Errorf("%v: stdout %q", args, r.stdout)
		}
		if !strings.HasPrefix(r.stderr, "plexus: the daemon is not running: start it with `plexus daemon`") ||
			!strings.Contains(r.stderr, "PLEXUS_HOME") || strings.Contains(r.stderr, "Usage:") {
			t.Errorf("%v: stderr %q", args, r.stderr)
		}
	}
	// With --json, the same error as JSON, once.
	r := run(t, "", "status", "--json")
	var out struct{ Error apitype.ErrorBody }
	if r.code != ExitError || r.stdout != "" || json.Unmarshal([]byte(r.stderr), &out) != nil ||
		out.Error.Code != codeNoDaemon || !strings.Contains(out.Error.Message, "start it with `plexus daemon`") {
		t.Errorf("status --json: exit %d, stderr %q", r.code, r.stderr)
	}
}

const serversJSON = `{"revision":3,"servers":[
	{"name":"docs","type":"stdio","enabled":true,"state":"ready","tools":4,"since":"2026-01-01T00:00:00Z"},
	{"name":"search","type":"http","enabled":true,"state":"failed","tools":0,"lastError":"401 Unauthorized\nWWW-Authenticate: Bearer","since":"2026-01-01T00:00:00Z"},
	{"name":"old","type":"sse","enabled":false,"state":"disabled","tools":0,"since":"2026-01-01T00:00:00Z"}]}`

func TestLs(t *testing.T) {
	startFake(t, map[string]reply{"GET /v1/servers": {200, serversJSON}})
	r := run(t, "", "ls")
	want := "NAME    STATE     TYPE   TOOLS  ERROR\n" +
		"docs    ready     stdio  4\n" +
		"search  failed    http   0      401 Unauthorized\n" +
		"old     disabled  sse    0\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}

	r = run(t, "", "ls", "--json")
	var got []apitype.ServerStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 3 || got[1].LastError == "" || got[2].Enabled {
		t.Errorf("ls --json: %v, %s", err, r.stdout)
	}
	if !strings.Contains(r.stdout, "\n  {\n    \"name\": \"docs\",") {
		t.Errorf("ls --json is not indented: %s", r.stdout)
	}
}

func TestLsEmpty(t *testing.T) {
	startFake(t, map[string]reply{"GET /v1/servers": {200, `{"revision":1,"servers":null}`}})
	if r := run(t, "", "ls", "--json"); r.code != 0 || r.stdout != "[]\n" {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
	if r := run(t, "", "ls"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "plexus add") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestStatus(t *testing.T) {
	started := time.Now().Add(-90 * time.Minute).UTC().Format(time.RFC3339)
	startFake(t, map[string]reply{"GET /v1/status": {200, `{"version":"0.1.0","pid":4242,"home":"/home/u/.plexus","startedAt":"` + started + `","revision":9,
		"servers":[{"name":"docs","type":"stdio","enabled":true,"state":"ready","tools":4}]}`}})
	r := run(t, "", "status")
	for _, want := range []string{"pid 4242", "version 0.1.0", "home      /home/u/.plexus", "uptime    1h30m", "revision  9", "NAME  STATE  TYPE   TOOLS", "docs  ready  stdio  4"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, "", "status", "--json")
	var st apitype.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.PID != 4242 || len(st.Servers) != 1 {
		t.Errorf("status --json: %v %s", err, r.stdout)
	}
}

func TestTools(t *testing.T) {
	f := startFake(t, map[string]reply{
		"GET /v1/tools?server=docs":                  {200, `{"tools":[{"name":"mcp_docs_find_ab12","server":"docs","tool":"find","description":"Find a document.\nLong details.","inputSchema":{"type":"object"},"kind":"tool"}],"warnings":["search left out: failed"]}`},
		"GET /v1/tools?format=anthropic&server=docs": {200, `[{"name":"mcp_docs_find_ab12","input_schema":{"type":"object"}}]`},
	})
	r := run(t, "", "tools", "--server", "docs")
	want := "NAME                SERVER  TOOL  DESCRIPTION\nmcp_docs_find_ab12  docs    find  Find a document.\n"
	if r.code != 0 || r.stdout != want || !strings.Contains(r.stderr, "warning: search left out") {
		t.Errorf("exit %d\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
	r = run(t, "", "tools", "--server", "docs", "--json")
	var tools []apitype.Tool
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) != 1 || string(tools[0].InputSchema) == "" {
		t.Errorf("tools --json: %v %s", err, r.stdout)
	}
	r = run(t, "", "tools", "--server", "docs", "--format", "anthropic")
	if r.stdout != `[{"name":"mcp_docs_find_ab12","input_schema":{"type":"object"}}]`+"\n" {
		t.Errorf("tools --format is not verbatim: %q", r.stdout)
	}
	if f.count() != 3 {
		t.Errorf("%d requests, want 3", f.count())
	}
}

func TestCall(t *testing.T) {
	f := startFake(t, map[string]reply{
		"POST /v1/call": {200, `{"result":{"content":[{"type":"text","text":"42 results"}]}}`},
	})
	r := run(t, "", "call", "mcp_docs_find_ab12", `{"q": "mcp"}`)
	if r.code != 0 || r.stdout != "42 results\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if body := f.request(t, "POST").body; !sameJSON(t, body, `{"name":"mcp_docs_find_ab12","arguments":{"q":"mcp"}}`) {
		t.Errorf("sent %s", body)
	}
}

func TestCallArgsFromStdin(t *testing.T) {
	f := startFake(t, map[string]reply{
		"POST /v1/call": {200, `{"result":{"content":[],"isError":true}}`},
	})
	r := run(t, `{"path": "/tmp"}`+"\n", "call", "t", "-")
	if r.code != ExitError {
		t.Errorf("an error result exits %d, want 1", r.code)
	}
	if body := f.request(t, "POST").body; !sameJSON(t, body, `{"name":"t","arguments":{"path":"/tmp"}}`) {
		t.Errorf("sent %s", body)
	}
}

func TestErrorsGiveRemedies(t *testing.T) {
	startFake(t, map[string]reply{
		"DELETE /v1/servers/nope": {404, `{"error":{"code":"not_found","message":"no server named \"nope\""}}`},
		"POST /v1/call":           {404, `{"error":{"code":"not_found","message":"no tool named \"t\""}}`},
		"POST /v1/servers": {400, `{"error":{"code":"bad_request","message":"invalid server config","problems":[
			{"path":"mcp.servers.fs.url","message":"userinfo is not allowed"},{"path":"mcp.servers.fs.name","message":"too long"}]}}`},
		"POST /v1/servers/fs/enable": {409, `{"error":{"code":"conflict","message":"fs could not start: exit status 1","hint":"see its stderr with ` + "`plexus status`" + `"}}`},
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rm", "nope"}, "plexus: removing nope: no server named \"nope\": see `plexus ls` for the configured servers\n"},
		{[]string{"call", "t"}, "plexus: no tool named \"t\": see `plexus tools` for the tool names\n"},
		{[]string{"add", "fs", "--no-verify", "https://u:p@x.example"}, "plexus: adding fs: invalid server config\n" +
			"  mcp.servers.fs.url: userinfo is not allowed\n  mcp.servers.fs.name: too long\n" +
			"correct the settings named above and run the command again\n"},
		{[]string{"enable", "fs"}, "plexus: enable fs: fs could not start: exit status 1: see its stderr with `plexus status`\n"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitError || r.stderr != tc.want || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr\n%q\nwant\n%q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestEditStale(t *testing.T) {
	startFake(t, map[string]reply{
		"GET /v1/servers/fs": {200, storedStdio},
		"PUT /v1/servers/fs": {409, `{"error":{"code":"stale_revision","message":"revision 7 is stale","revision":8}}`},
	})
	r := run(t, "", "edit", "fs", "--cwd", "/tmp")
	if r.code != ExitError || !strings.Contains(r.stderr, "the settings changed meanwhile: run the command again") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestSecrets(t *testing.T) {
	const canary = "s3cret-CANARY"
	f := startFake(t, map[string]reply{
		"PUT /v1/secrets/TOKEN":    {204, ``},
		"DELETE /v1/secrets/TOKEN": {204, ``},
		"GET /v1/secrets":          {200, `{"revision":2,"names":["A_KEY","TOKEN"]}`},
	})
	r := run(t, canary+"\n", "secret", "set", "TOKEN")
	if r.code != 0 || r.stdout != "stored secret TOKEN\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, canary) {
		t.Error("the secret was echoed")
	}
	// One trailing newline is trimmed; anything else is the value.
	if body := f.request(t, "PUT").body; body != `{"value":"`+canary+`"}` {
		t.Errorf("sent %s", body)
	}

	if r := run(t, "\n", "secret", "set", "TOKEN"); r.code != ExitError || !strings.Contains(r.stderr, "the value is empty") {
		t.Errorf("empty value: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, "", "secret", "rm", "TOKEN"); r.code != 0 || r.stdout != "deleted secret TOKEN\n" {
		t.Errorf("rm: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "secret", "ls"); r.code != 0 || r.stdout != "A_KEY\nTOKEN\n" {
		t.Errorf("ls: exit %d, %q", r.code, r.stdout)
	}
	if r := run(t, "", "secret", "ls", "--json"); r.stdout != "[\n  \"A_KEY\",\n  \"TOKEN\"\n]\n" {
		t.Errorf("ls --json: %q", r.stdout)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	f := startFake(t, map[string]reply{
		"GET /v1/resources":           {200, `{"resources":[{"server":"docs","uri":"file:///srv/a.md","name":"a","description":"A doc"}]}`},
		"POST /v1/resources/read":     {200, `{"result":{"contents":[{"uri":"file:///srv/a.md","text":"# A\n"}]}}`},
		"GET /v1/prompts?server=docs": {200, `{"prompts":[{"server":"docs","name":"summarize","arguments":[{"name":"path","required":true},{"name":"style"}]}]}`},
		"POST /v1/prompts/get":        {200, `{"result":{"messages":[{"role":"user","content":{"type":"text","text":"Summarize /srv/a.md"}}]}}`},
	})
	if r := run(t, "", "resources"); r.stdout != "SERVER  URI               NAME  DESCRIPTION\ndocs    file:///srv/a.md  a     A doc\n" {
		t.Errorf("resources: %q %q", r.stdout, r.stderr)
	}
	if r := run(t, "", "resources", "read", "docs", "file:///srv/a.md"); r.stdout != "# A\n" {
		t.Errorf("resources read: %q %q", r.stdout, r.stderr)
	}
	if r := run(t, "", "prompts", "--server", "docs"); r.stdout != "SERVER  NAME       ARGUMENTS     DESCRIPTION\ndocs    summarize  path [style]\n" {
		t.Errorf("prompts: %q %q", r.stdout, r.stderr)
	}
	r := run(t, "", "prompts", "get", "docs", "summarize", "path=/srv/a.md", "style=a=b")
	if r.stdout != "user: Summarize /srv/a.md\n" {
		t.Errorf("prompts get: %q %q", r.stdout, r.stderr)
	}
	// A value may itself contain "=": only the first one separates.
	if body := f.bodyOf(t, "POST /v1/prompts/get"); !sameJSON(t, body, `{"server":"docs","name":"summarize","arguments":{"path":"/srv/a.md","style":"a=b"}}`) {
		t.Errorf("prompts get sent %s", body)
	}
}

func TestForegroundCommands(t *testing.T) {
	var ran []string
	env := func(out *strings.Builder) Env {
		return Env{
			Stdout: out, Stderr: out,
			RunDaemon: func(ctx context.Context, _ DaemonOptions) error {
				ran = append(ran, "daemon")
				return nil
			},
			RunExampleServer: func(ctx context.Context) error {
				ran = append(ran, "example")
				return errors.New("stdin closed")
			},
		}
	}
	var out strings.Builder
	if code := Run(t.Context(), []string{"daemon"}, env(&out)); code != 0 {
		t.Errorf("daemon: exit %d: %s", code, out.String())
	}
	out.Reset()
	if code := Run(t.Context(), []string{"example-server"}, env(&out)); code != 1 || !strings.Contains(out.String(), "stdin closed") {
		t.Errorf("example-server: exit %d: %s", code, out.String())
	}
	if strings.Join(ran, ",") != "daemon,example" {
		t.Errorf("ran %v", ran)
	}

	// Stopped by a signal (main cancels the context): a normal end.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out.Reset()
	code := Run(ctx, []string{"daemon"}, Env{Stdout: &out, Stderr: &out, RunDaemon: func(ctx context.Context, _ DaemonOptions) error { return ctx.Err() }})
	if code != 0 {
		t.Errorf("daemon stopped by a signal: exit %d: %s", code, out.String())
	}
	// Without a runner (a build that leaves it out), an error, not a panic.
	if code := Run(t.Context(), []string{"daemon"}, Env{}); code != 1 {
		t.Errorf("no runner: exit %d", code)
	}
}
