package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRender(t *testing.T) {
	entries := []Entry{
		{
			Name: "mcp_fs_read_file_x", Title: "Read file", Description: "Reads <a> & b.",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"string"}`),
			Annotations:  json.RawMessage(`{"readOnlyHint":true}`),
			Kind:         KindTool,
		},
		{Name: "mcp_fs_bare_y", Kind: KindTool},
	}
	tests := []struct{ format, want string }{
		{FormatMCP, `[` +
			`{"name":"mcp_fs_read_file_x","title":"Read file","description":"Reads <a> & b.","inputSchema":{"type":"object"},"outputSchema":{"type":"string"},"annotations":{"readOnlyHint":true}},` +
			`{"name":"mcp_fs_bare_y","inputSchema":{"type":"object","properties":{}}}]`},
		{FormatOpenAI, `[` +
			`{"type":"function","function":{"name":"mcp_fs_read_file_x","description":"Reads <a> & b.","parameters":{"type":"object"}}},` +
			`{"type":"function","function":{"name":"mcp_fs_bare_y","parameters":{"type":"object","properties":{}}}}]`},
		{FormatAnthropic, `[` +
			`{"name":"mcp_fs_read_file_x","description":"Reads <a> & b.","input_schema":{"type":"object"}},` +
			`{"name":"mcp_fs_bare_y","input_schema":{"type":"object","properties":{}}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			got, err := Render(entries, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Render =\n%s\nwant\n%s", got, tt.want)
			}
			empty, err := Render(nil, tt.format)
			if err != nil || string(empty) != "[]" {
				t.Errorf("Render(nil) = %s, %v; want []", empty, err)
			}
		})
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	_, err := Render(nil, "gemini")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"gemini"`, "mcp", "openai", "anthropic"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestRenderBuilt checks that what Build produces renders as valid JSON in
// every format, with names the model APIs accept.
func TestRenderBuilt(t *testing.T) {
	entries, _, err := build("fs", []*mcp.Tool{tool("read.file", "R")}, []*mcp.Resource{{URI: "file:///x"}}, nil, nil, Filter{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range Formats() {
		out, err := Render(entries, format)
		if err != nil {
			t.Fatal(err)
		}
		var tools []map[string]any
		if err := json.Unmarshal(out, &tools); err != nil || len(tools) != 2 {
			t.Fatalf("%s: %d tools, %v: %s", format, len(tools), err, out)
		}
	}
}
