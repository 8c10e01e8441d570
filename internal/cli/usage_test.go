package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestUsageErrors checks that mistakes in the command line print the usage
// to stderr and exit 2, without reaching the daemon: none runs here, so a
// command that tried would exit 1 instead.
func TestUsageErrors(t *testing.T) {
	t.Setenv("PLEXUS_HOME", shortTempDir(t))
	for _, tc := range []struct {
		args []string
		msg  string // part of the error
	}{
		{nil, "give a command"},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"sttaus"}, "Did you mean this?"},
		{[]string{"ls", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"ls", "extra"}, `unexpected argument "extra"`},
		{[]string{"status", "--json=maybe"}, "invalid argument"},
		{[]string{"add"}, "give the server's name first"},
		{[]string{"add", "--", "npx"}, "give the server's name first"},
		{[]string{"add", "fs"}, "give a URL"},
		{[]string{"add", "fs", "--"}, "give the command after --"},
		{[]string{"add", "fs", "https://x.example", "--", "cmd"}, "either a URL or a command"},
		{[]string{"add", "fs", "--command", "a", "--", "b"}, "either after -- or with --command"},
		{[]string{"add", "fs", "a", "b"}, "a command goes after --"},
		{[]string{"add", "fs", "npx"}, `"npx" is not an http(s) URL`},
		{[]string{"add", "fs", "https://x.example", "--transport", "grpc"}, `--transport "grpc"`},
		{[]string{"add", "fs", "--transport", "sse", "--", "cmd"}, "--transport is for URL servers"},
		{[]string{"add", "fs", "--call-timeout", "soon", "https://x.example"}, `invalid argument "soon"`},
		{[]string{"add", "fs", "--call-timeout", "-5", "https://x.example"}, `invalid argument "-5" for "--call-timeout" flag: -5 is negative`},
		{[]string{"add", "fs", "--idle-stop", "3x", "https://x.example"}, `invalid argument "3x" for "--idle-stop" flag: want milliseconds or a duration like 30s, not "3x"`},
		{[]string{"add", "fs", "https://x.example", "--env", "A=B"}, "--env and --cwd are for stdio servers"},
		{[]string{"add", "fs", "--header", "A=B", "--", "cmd"}, "--header and --bearer-env are for URL servers"},
		{[]string{"add", "fs", "https://x.example", "--header", "X-Key"}, "--header needs NAME=VAR"},
		{[]string{"add", "fs", "https://x.example", "--header", "Bad Name=V"}, "not a valid HTTP header name"},
		{[]string{"add", "fs", "https://x.example", "--bearer-env", "two words"}, "--bearer-env needs a variable name"},
		{[]string{"add", "m", "https://x.example", "--oauth-grant", "client_credentials", "--client-secret-env", "CANARY-s3cr3t-value!"}, "--client-secret-env needs a variable name"},
		{[]string{"add", "fs", "--client-id", "c", "--", "srv"}, "the OAuth flags are for URL servers"},
		{[]string{"add", "fs", "--command", "a | b"}, "--command:"},
		{[]string{"add", "fs", "--command", "   "}, "--command"},
		{[]string{"edit"}, "give the server's name first"},
		{[]string{"edit", "fs"}, "nothing to change"},
		{[]string{"edit", "fs", "extra"}, `unexpected argument "extra"`},
		{[]string{"edit", "fs", "--no-verify"}, "nothing to change"},
		{[]string{"edit", "fs", "--url", "https://x.example", "--", "cmd"}, "either --url or a command"},
		{[]string{"edit", "fs", "--command", "x", "--", "y"}, "either after -- or with --command"},
		{[]string{"edit", "fs", "--url", "ftp://x.example"}, "is not an http(s) URL"},
		{[]string{"edit", "fs", "--transport", "grpc"}, `--transport "grpc"`},
		{[]string{"edit", "fs", "--header", "X=not a var"}, "secrets are never written in config"},
		{[]string{"edit", "fs", "--call-timeout", "-1"}, `invalid argument "-1" for "--call-timeout" flag: -1 is negative`},
		{[]string{"edit", "fs", "--command", ""}, "--command"},
		{[]string{"edit", "fs", "--"}, "give the command after --"},
		{[]string{"rm"}, "missing NAME"},
		{[]string{"rm", "a", "b"}, `unexpected argument "b"`},
		{[]string{"enable"}, "missing NAME"},
		{[]string{"call"}, "missing NAME"},
		{[]string{"call", "t", "[1,2]"}, "must be a JSON object, e.g. plexus call NAME"},
		{[]string{"call", "t", "{oops"}, "must be a JSON object"},
		{[]string{"call", "t", "null"}, "must be a JSON object"},
		{[]string{"call", "t", "{}", "more"}, `unexpected argument "more"`},
		{[]string{"tools", "--format", "xml"}, `--format "xml"`},
		{[]string{"tools", "--format", "mcp", "--json"}, "--json or --format"},
		{[]string{"resources", "extra"}, `unknown command "extra"`},
		{[]string{"resources", "read", "s"}, "missing URI"},
		{[]string{"prompts", "get", "s"}, "missing NAME"},
		{[]string{"prompts", "get", "s", "p", "novalue"}, `"novalue": want KEY=VALUE`},
		{[]string{"logs"}, "missing NAME"},
		{[]string{"logs", "a", "b"}, `unexpected argument "b"`},
		{[]string{"logs", "a", "--tail"}, "unknown flag: --tail"},
		{[]string{"restart"}, "missing NAME"},
		{[]string{"reload", "now"}, `unexpected argument "now"`},
		{[]string{"events", "docs"}, `unexpected argument "docs"`},
		{[]string{"secret"}, "give a subcommand"},
		{[]string{"secret", "bogus"}, `unknown command "bogus"`},
		{[]string{"secret", "set"}, "missing VAR"},
		{[]string{"secret", "rm"}, "missing VAR"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			// With --json the usage error is JSON, without the usage text.
			usage := "Usage:"
			if slices.Contains(tc.args, "--json") {
				usage = `"code": "usage"`
			}
			if !strings.Contains(r.stderr, tc.msg) || !strings.Contains(r.stderr, usage) {
				t.Errorf("stderr lacks %q or the usage:\n%s", tc.msg, r.stderr)
			}
		})
	}
}

// TestSecretValuesNotEchoed checks that a value given where a name belongs
// (a likely pasted secret) is refused without being repeated.
func TestSecretValuesNotEchoed(t *testing.T) {
	t.Setenv("PLEXUS_HOME", shortTempDir(t))
	const canary = "sk-live-CANARY123"
	for _, args := range [][]string{
		{"add", "fs", "https://x.example", "--header", "X-Api-Key=" + canary},
		{"add", "fs", "https://x.example", "--header", canary},
		{"add", "fs", "https://x.example", "--bearer-env", canary},
		{"add", "fs", "--env", "TOKEN=" + canary, "--", "cmd"},
		{"add", "fs", "--env", canary, "--", "cmd"},
		{"secret", "set", "TOKEN", canary},
		{"secret", "set", canary},
	} {
		r := run(t, "", args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
		if strings.Contains(r.stdout+r.stderr, canary) {
			t.Errorf("%v: output repeats the value:\n%s", args, r.stderr)
		}
	}
	r := run(t, "", "add", "fs", "https://x.example", "--header", "X-Api-Key="+canary)
	if !strings.Contains(r.stderr, "plexus secret set VAR") {
		t.Errorf("no remedy:\n%s", r.stderr)
	}
}

// TestEditUsageAgainstStoredKind checks the usage errors that depend on the
// kind of the stored server.
func TestEditUsageAgainstStoredKind(t *testing.T) {
	f := startFake(t, map[string]reply{
		"GET /v1/servers/fs":     {200, storedStdio},
		"GET /v1/servers/search": {200, storedHTTP},
	})
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"edit", "fs", "--header", "X=Y"}, "are for URL servers"},
		{[]string{"edit", "fs", "--bearer-env", "T"}, "are for URL servers"},
		{[]string{"edit", "fs", "--transport", "sse"}, "needs a URL: give --url URL"},
		{[]string{"edit", "search", "--env", "A=B"}, "are for stdio servers"},
		{[]string{"edit", "search", "--cwd", "/srv"}, "are for stdio servers"},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
	}
	if n := f.count(); n != 5 {
		t.Errorf("%d requests, want only the 5 reads", n)
	}
	// Removing what is not there is refused, naming what is.
	r := run(t, "", "edit", "search", "--rm-header", "X-Nope")
	if r.code != ExitError || !strings.Contains(r.stderr, `no header "X-Nope": it has X-Api-Key, X-Old`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
