package registry

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/registry/registrytest"
)

// doc decodes one testdata answer.
func doc(t *testing.T, file string) Entry {
	t.Helper()
	b, ok := registrytest.Documents()[file]
	if !ok {
		t.Fatalf("no testdata %s", file)
	}
	e, err := DecodeEntry(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return e
}

func configJSON(t *testing.T, s config.Server) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string
		req     Request
		want    string   // the configuration's JSON
		missing []string // keys
		notes   []string // substrings, one per note expected
	}{
		{name: "npm package, optional env left out", file: "memory-2026.8.31.json",
			want:  `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-memory@2026.8.31"]}`,
			notes: []string{"optional inputs left out: MEMORY_FILE_PATH"}},
		{name: "npm package, a file path from ~", file: "memory-2026.8.31.json",
			req:  Request{Home: "/home/ada", Values: map[string][]string{"MEMORY_FILE_PATH": {"~/memory.jsonl"}}},
			want: `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-memory@2026.8.31"],"env":{"MEMORY_FILE_PATH":{"value":"/home/ada/memory.jsonl"}}}`},
		{name: "PyPI package, required values missing", file: "neo4j-cypher-1.0.0.json",
			want:    `{"type":"stdio","command":"uvx","args":["mcp-neo4j-cypher==0.5.1"],"env":{"NEO4J_PASSWORD":{"env":"NEO4J_CYPHER_NEO4J_PASSWORD"}}}`,
			missing: []string{"env:NEO4J_URI", "env:NEO4J_USERNAME"}},
		{name: "PyPI package, values given by their short names", file: "neo4j-cypher-1.0.0.json",
			req: Request{Values: map[string][]string{"NEO4J_URI": {"bolt://127.0.0.1:7687"}, "env:NEO4J_USERNAME": {"neo4j"}, "NEO4J_DATABASE": {"movies"}}},
			want: `{"type":"stdio","command":"uvx","args":["mcp-neo4j-cypher==0.5.1"],"env":{"NEO4J_DATABASE":{"value":"movies"},"NEO4J_PASSWORD":{"env":"NEO4J_CYPHER_NEO4J_PASSWORD"},` +
				`"NEO4J_URI":{"value":"bolt://127.0.0.1:7687"},"NEO4J_USERNAME":{"value":"neo4j"}}}`},
		{name: "remote with a secret Authorization header", file: "github-0.24.0.json",
			want:  `{"type":"http","url":"https://api.githubcopilot.com/mcp/","bearerTokenEnvVar":"GITHUB_TOKEN"}`,
			notes: nil},
		{name: "PyPI with a secret argument, left out", file: "motherduck-0.8.0.json",
			req:   Request{Server: "duck", Values: map[string][]string{"--db-path": {"md:mine"}, "--max-rows": {"100"}}, Secrets: map[string]bool{"env:motherduck_token": true}},
			want:  `{"type":"stdio","command":"uvx","args":["mcp-server-motherduck==0.8.0","--db-path","md:mine","--max-rows","100"],"env":{"motherduck_token":{"env":"DUCK_MOTHERDUCK_TOKEN"}}}`,
			notes: []string{"left out the secret argument --motherduck-token", "optional inputs left out: --transport"}},
		{name: "npm, version latest, a required named argument", file: "bytedance-filesystem-1.0.0.json",
			req:   Request{Values: map[string][]string{"allowed-directories": {"/srv/docs"}}},
			want:  `{"type":"stdio","command":"npx","args":["-y","@agent-infra/mcp-server-filesystem@latest","allowed-directories","/srv/docs"]}`,
			notes: []string{`version is "latest", not pinned`}},
		{name: "npm, the required argument missing", file: "bytedance-filesystem-1.0.0.json",
			want:    `{"type":"stdio","command":"npx","args":["-y","@agent-infra/mcp-server-filesystem@latest"]}`,
			missing: []string{"arg:allowed-directories"}},
		{name: "a bundle is passed over for the remote", file: "mcpbundles-agent-interviews-1.0.0.json",
			want: `{"type":"http","url":"https://mcp.mcpbundles.com/bundle/agent-interviews/","bearerTokenEnvVar":"AGENT_INTERVIEWS_TOKEN"}`},
		{name: "an SSE remote, a secret and a chosen header", file: "hybrid-1.5.0.json",
			req:  Request{Option: 2, Values: map[string][]string{"X-Region": {"eu-west-1"}}},
			want: `{"type":"sse","url":"https://mcp.anonymous.modelcontextprotocol.io/sse","headers":{"X-API-Key":{"env":"HYBRID_X_API_KEY"},"X-Region":"eu-west-1"}}`},
		{name: "a remote URL's variable", file: "hybrid-1.5.0.json",
			req:  Request{Option: 3, Values: map[string][]string{"tenant": {"acme"}}},
			want: `{"type":"http","url":"https://acme.mcp.anonymous.modelcontextprotocol.io/http"}`},
		{name: "a remote URL's variable missing", file: "hybrid-1.5.0.json",
			req:     Request{Option: 3},
			want:    `{"type":"http","url":"https://.mcp.anonymous.modelcontextprotocol.io/http"}`,
			missing: []string{"var:tenant"}},
		{name: "an optional named argument with choices left out", file: "hybrid-1.5.0.json",
			want:  `{"type":"stdio","command":"npx","args":["-y","@example/hybrid-mcp-server@1.5.0"]}`,
			notes: []string{"optional inputs left out: --mode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := doc(t, tc.file)
			p, err := Translate(e.Server, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := configJSON(t, p.Config); got != tc.want {
				t.Errorf("config\n got %s\nwant %s", got, tc.want)
			}
			if !slices.Equal(p.Missing, tc.missing) {
				t.Errorf("missing = %v, want %v", p.Missing, tc.missing)
			}
			for _, n := range tc.notes {
				if !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, n) }) {
					t.Errorf("no note %q in %q", n, p.Notes)
				}
			}
			for _, f := range p.Fields {
				if f.Secret && len(f.Value) > 0 {
					t.Errorf("secret field %s has a value", f.Key)
				}
				if f.Secret && f.Omitted == "" && f.Var == "" {
					t.Errorf("secret field %s names no managed variable", f.Key)
				}
			}
		})
	}
}

func TestTranslateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		option     int
		want       []string
	}{
		{"an OCI image only", "github-0.20.2.json", 0, []string{"Plexus runs no containers", "ghcr.io/github/github-mcp-server:0.20.2", "offers nothing else"}},
		{"a bundle, chosen", "mcpbundles-agent-interviews-1.0.0.json", 1, []string{"MCP bundle", "it also offers option 2 (remote https://mcp.mcpbundles.com/bundle/agent-interviews/)"}},
		{"a package serving HTTP on a port", "bytedance-filesystem-1.0.0.json", 3, []string{"serves MCP over HTTP on a port of its own", "option 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Translate(doc(t, tc.file).Server, Request{Option: tc.option})
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestTranslateRefusesSecretsOnTheCommandLine(t *testing.T) {
	s := Server{Name: "com.example/cli", Version: "1.0.0", Packages: []Package{{RegistryType: "npm", Identifier: "cli-mcp", Version: "1.0.0",
		PackageArguments: []Argument{{Type: "named", Name: "--token", Input: Input{IsRequired: true, IsSecret: true}}}}}}
	_, err := Translate(s, Request{})
	if err == nil || !strings.Contains(err.Error(), "Plexus does not put secrets there") {
		t.Errorf("a required secret argument: err = %v", err)
	}
	s.Packages[0].PackageArguments = []Argument{{Type: "positional", Input: Input{Value: "--key={key}"},
		Variables: map[string]Input{"key": {IsSecret: true}}}}
	_, err = Translate(s, Request{})
	if err == nil || !strings.Contains(err.Error(), "where Plexus does not write secrets") {
		t.Errorf("a secret variable in an argument: err = %v", err)
	}
}

func TestTranslateInputErrors(t *testing.T) {
	for _, tc := range []struct {
		file   string
		req    Request
		errHas string
	}{
		{"motherduck-0.8.0.json", Request{Values: map[string][]string{"--max-rows": {"many"}}}, "must be a number"},
		{"motherduck-0.8.0.json", Request{Values: map[string][]string{"--transport": {"carrier-pigeon"}}}, "must be one of stdio, sse, stream"},
		{"motherduck-0.8.0.json", Request{Values: map[string][]string{"--no-such": {"1"}}}, "has no such input"},
		{"memory-2026.8.31.json", Request{Values: map[string][]string{"MEMORY_FILE_PATH": {"relative.jsonl"}}}, "must be a whole path"},
		{"memory-2026.8.31.json", Request{Values: map[string][]string{"MEMORY_FILE_PATH": {"/a", "/b"}}}, "takes one value"},
		{"memory-2026.8.31.json", Request{Values: map[string][]string{"MEMORY_FILE_PATH": {"/a\n/b"}}}, "one line"},
		{"memory-2026.8.31.json", Request{Option: 7}, "offers options 1 to 1"},
		{"memory-2026.8.31.json", Request{Server: "bad name!"}, "not a valid name"},
	} {
		_, err := Translate(doc(t, tc.file).Server, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s %v: err = %v, want …%s…", tc.file, tc.req.Values, err, tc.errHas)
		}
	}
}

// TestTranslateEscapesDollar: a literal $ of a URL or a header is not read
// as a placeholder of a managed variable.
func TestTranslateEscapesDollar(t *testing.T) {
	s := Server{Name: "com.example/cost", Version: "1.0.0", Remotes: []Transport{{Type: "streamable-http", URL: "https://x.example.com/$root/{id}",
		Variables: map[string]Input{"id": {IsRequired: true}},
		Headers:   []KeyValue{{Name: "X-Price", Input: Input{Value: "$5"}}}}}}
	p, err := Translate(s, Request{Values: map[string][]string{"id": {"a$b"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"http","url":"https://x.example.com/$$root/a$$b","headers":{"X-Price":"$$5"}}`
	if got := configJSON(t, p.Config); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestSuggestName(t *testing.T) {
	for in, want := range map[string]string{
		"io.github.github/github-mcp-server":           "github",
		"io.github.neo4j-contrib/mcp-neo4j-cypher":     "neo4j-cypher",
		"io.github.modelcontextprotocol/server-memory": "memory",
		"com.mcpbundles/agent-interviews":              "agent-interviews",
	} {
		if got := SuggestName(in); got != want {
			t.Errorf("SuggestName(%q) = %q, want %q", in, got, want)
		}
	}
}
