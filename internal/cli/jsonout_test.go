package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandAcceptsJSON walks the whole command tree: every command
// takes --json, and every one that talks to the daemon, run with --json
// while no daemon runs, fails with exit 1 and the error as
// {"error": {"code": "daemon_not_running", …}} on stderr, nothing else.
func TestEveryCommandAcceptsJSON(t *testing.T) {
	t.Setenv("PLEXUS_HOME", shortTempDir(t))
	// The arguments each command needs to get as far as the daemon.
	sample := map[string][]string{
		"add": {"x", "https://h.example/mcp"}, "edit": {"x", "--call-timeout", "5"},
		"call": {"mcp_x_echo_abcd1234"}, "resources read": {"x", "file:///a"}, "prompts get": {"x", "p"},
		"accept": {"x", "--all"}, "import": {"--dialect", "claude", "jsonout_test.go"},
		"status": {}, "ls": {}, "reload": {}, "tools": {}, "resources": {}, "prompts": {}, "events": {}, "audit": {},
		"secret ls": {}, "ui": {"--no-browser"}, "revisions": {},
		"settings show": {}, "settings get": {"retryMs"}, "settings set": {"retryMs", "5"}, "settings unset": {"retryMs"},
	}
	// Commands that do not answer from the daemon: they run it, run a
	// server, take over the terminal, or print a script.
	local := map[string]bool{"daemon": true, "mcp": true, "example-server": true, "tui": true, "export": true,
		"help": true, "completion": true, "completion bash": true, "completion zsh": true, "completion fish": true,
		"completion powershell": true, "secret": true, "secret set": true,
		// These edit another client's own file (the home's, here), and
		// settings alone only names its subcommands.
		"connect": true, "disconnect": true, "settings": true,
		// These ask the system's service manager, not the daemon.
		"service": true, "service install": true, "service uninstall": true, "service status": true,
		// These copy a stopped daemon's store.
		"store": true, "store migrate": true,
		// This reads the binary's own build information.
		"version": true}
	a := &app{}
	root := a.rootCommand()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "plexus ")
		if c.Flag("json") == nil {
			t.Errorf("plexus %s has no --json", path)
		}
		if local[path] {
			return
		}
		args, ok := sample[path]
		if !ok {
			args = []string{"x"}
		}
		n++
		r := run(t, "", append(append(strings.Fields(path), args...), "--json")...)
		var out struct {
			Error struct{ Code, Message string }
		}
		if r.code != ExitError || json.Unmarshal([]byte(r.stderr), &out) != nil || out.Error.Code != codeNoDaemon || r.stdout != "" {
			t.Errorf("plexus %s %s --json: exit %d, stdout %q, stderr:\n%s", path, strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	walk(root)
	if n < 20 {
		t.Errorf("only %d commands were run", n)
	}
	// A usage error is JSON too, with exit 2.
	r := run(t, "", "ls", "--no-such-flag", "--json")
	if r.code != ExitUsage || !strings.HasPrefix(r.stderr, `{`) || !strings.Contains(r.stderr, `"code": "usage"`) {
		t.Errorf("usage error with --json: exit %d\n%s", r.code, r.stderr)
	}
}

// TestResultJSON: a command without JSON of its own prints the daemon's
// answer as JSON with --json, and its line for people without.
func TestResultJSON(t *testing.T) {
	startFake(t, map[string]reply{
		"DELETE /v1/servers/x":       {200, `{"revision": 7}`},
		"POST /v1/servers/x/restart": {200, `{"revision": 7, "server": {"name": "x", "type": "stdio", "enabled": true, "state": "ready", "tools": 2, "since": "2026-01-01T00:00:00Z"}}`},
	})
	r := run(t, "", "rm", "x", "--json")
	var ok okResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ok) != nil || !ok.OK || ok.Server != "x" {
		t.Errorf("rm --json: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "rm", "x"); r.stdout != "removed x\n" {
		t.Errorf("rm: %q", r.stdout)
	}
	r = run(t, "", "restart", "x", "--json")
	var wr struct {
		Revision int64
		Server   struct{ Name, State string }
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &wr) != nil || wr.Revision != 7 || wr.Server.State != "ready" {
		t.Errorf("restart --json: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
