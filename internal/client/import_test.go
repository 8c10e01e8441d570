package client

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

func TestImportSendsTheFile(t *testing.T) {
	f := startFake(t, map[string]canned{
		"POST /v1/import": {200, `{"dialect":"claude","dryRun":true,"revision":3,"entries":[{"source":"mcpServers.gh","original":"gh","name":"gh","action":"imported","result":"added","secrets":["GH_TOKEN"]}],"added":["gh"],"unchanged":[],"conflicts":[],"secretsSet":["GH_TOKEN"],"secretsKept":[],"missing":[]}`},
	})
	c := New(f.home)
	res, err := c.Import(t.Context(), apitype.ImportRequest{Dialect: "claude", Source: "/home/me/.claude.json", Content: `{"mcpServers":{}}`, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 3 || len(res.Entries) != 1 || res.Entries[0].Secrets[0] != "GH_TOKEN" || res.Added[0] != "gh" {
		t.Fatalf("result: %+v", res)
	}
	var sent apitype.ImportRequest
	if err := json.Unmarshal([]byte(f.last(t).Body), &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Dialect != "claude" || sent.Source != "/home/me/.claude.json" || sent.Content != `{"mcpServers":{}}` || !sent.DryRun {
		t.Fatalf("sent: %+v", sent)
	}
}

func TestImportErrorIsAPIError(t *testing.T) {
	f := startFake(t, map[string]canned{
		"POST /v1/import": {400, `{"error":{"code":"bad_request","message":"cannot import the file: codex: line 3: invalid TOML","hint":"check the file"}}`},
	})
	_, err := New(f.home).Import(t.Context(), apitype.ImportRequest{Content: "x"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Body.Code != apitype.CodeBadRequest || ae.Body.Hint != "check the file" {
		t.Fatalf("err = %#v", err)
	}
}

func TestExportQuery(t *testing.T) {
	f := startFake(t, map[string]canned{
		"GET /v1/export?client=vscode":                                  {200, `{"client":"vscode","path":".vscode/mcp.json","format":"json","text":"{}\n"}`},
		"GET /v1/export?client=codex&command=%2Fopt%2Fplexus+%28new%29": {200, `{"client":"codex","path":"~/.codex/config.toml","format":"toml","text":"x"}`},
	})
	c := New(f.home)
	s, err := c.Export(t.Context(), "vscode", "")
	if err != nil || s.Path != ".vscode/mcp.json" || s.Text != "{}\n" {
		t.Fatalf("vscode: %+v, %v", s, err)
	}
	s, err = c.Export(t.Context(), "codex", "/opt/plexus (new)")
	if err != nil || s.Format != "toml" {
		t.Fatalf("codex: %+v, %v", s, err)
	}
}
