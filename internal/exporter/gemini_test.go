package exporter

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/importer"
)

// TestGeminiRoundTrip writes a server of each transport in Gemini CLI's
// dialect and reads the file back with the importer's Gemini reader:
// httpUrl is streamable HTTP, url is SSE, command/args/env/cwd a stdio
// server, and plain headers and env values stay plain values.
func TestGeminiRoundTrip(t *testing.T) {
	text := GeminiSettings(map[string]GeminiServer{
		"docs":   {Type: "http", URL: "https://docs.example.com/mcp", Headers: map[string]string{"X-Team": "blue"}},
		"legacy": {Type: "sse", URL: "https://old.example.com/sse"},
		"fs": {Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/my docs"},
			Env: map[string]string{"DEBUG": "1"}, Cwd: "/srv"},
	})
	var raw map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	if _, ok := raw["mcpServers"]["docs"]["httpUrl"]; !ok {
		t.Errorf("the HTTP server has no httpUrl:\n%s", text)
	}
	if _, ok := raw["mcpServers"]["legacy"]["httpUrl"]; ok {
		t.Errorf("the SSE server has an httpUrl:\n%s", text)
	}
	res, err := importer.ParseIn(importer.Gemini, []byte(text), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Entries {
		for _, n := range e.Notes {
			if !strings.Contains(n, "kept as") { // a plain value is said to stay plain
				t.Errorf("%s: the importer has a note: %s", e.Source, n)
			}
		}
	}
	docs, legacy, fs := res.Servers["docs"], res.Servers["legacy"], res.Servers["fs"]
	if len(res.Servers) != 3 {
		t.Fatalf("imported back %d servers: %+v", len(res.Servers), res.Servers)
	}
	if docs.Type != config.TypeHTTP || docs.URL != "https://docs.example.com/mcp" || docs.Headers["X-Team"].Text != "blue" {
		t.Errorf("docs imported back as %+v", docs)
	}
	if legacy.Type != config.TypeSSE || legacy.URL != "https://old.example.com/sse" {
		t.Errorf("legacy imported back as %+v", legacy)
	}
	if fs.Type != config.TypeStdio || fs.Command != "npx" || !slices.Equal(fs.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/my docs"}) ||
		fs.Cwd != "/srv" || fs.Env["DEBUG"].Value == nil || *fs.Env["DEBUG"].Value != "1" {
		t.Errorf("fs imported back as %+v", fs)
	}
}
