package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func findKind(entries []Entry, kind string) (Entry, bool) {
	for _, e := range entries {
		if e.Kind == kind {
			return e, true
		}
	}
	return Entry{}, false
}

func TestBuildOperations(t *testing.T) {
	res := []*mcp.Resource{{URI: "file:///a.txt", Name: "a"}}
	tmpl := []*mcp.ResourceTemplate{{URITemplate: "file:///{path}", Name: "any file"}}
	prompts := []*mcp.Prompt{{Name: "summarize", Arguments: []*mcp.PromptArgument{{Name: "text", Required: true}}}}
	tests := []struct {
		name                  string
		res                   []*mcp.Resource
		tmpl                  []*mcp.ResourceTemplate
		prompts               []*mcp.Prompt
		wantRead, wantPrompts bool
	}{
		{"nothing", nil, nil, nil, false, false},
		{"resources", res, nil, nil, true, false},
		{"templates only", nil, tmpl, nil, true, false},
		{"prompts", nil, nil, prompts, false, true},
		{"all", res, tmpl, prompts, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, warnings, err := build("fs", nil, tt.res, tt.tmpl, tt.prompts, Filter{}, Limits{})
			if err != nil || len(warnings) > 0 {
				t.Fatalf("Build: %v, warnings %q", err, warnings)
			}
			read, gotRead := findKind(entries, KindReadResource)
			get, gotPrompts := findKind(entries, KindGetPrompt)
			if gotRead != tt.wantRead || gotPrompts != tt.wantPrompts {
				t.Fatalf("read_resource %v get_prompt %v, want %v %v", gotRead, gotPrompts, tt.wantRead, tt.wantPrompts)
			}
			if gotRead && (read.Name != OpName("fs", KindReadResource) || read.Tool != KindReadResource) {
				t.Errorf("read_resource entry = %+v", read)
			}
			if gotPrompts && (get.Name != OpName("fs", KindGetPrompt) || get.Tool != KindGetPrompt) {
				t.Errorf("get_prompt entry = %+v", get)
			}
		})
	}
}

func TestReadResourceEntry(t *testing.T) {
	var res []*mcp.Resource
	for i := range 25 {
		res = append(res, &mcp.Resource{URI: fmt.Sprintf("mem://r%d", i), Name: fmt.Sprint("r", i)})
	}
	res[0].Description = "first\n\n## Heading\u200b<!-- hidden -->"
	tmpl := []*mcp.ResourceTemplate{{URITemplate: "mem://{id}", Title: "By id"}}
	entries, _, err := build("mem", []*mcp.Tool{tool("read_resource", "a real upstream tool")}, res, tmpl, nil, Filter{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name == entries[1].Name {
		t.Fatalf("want the upstream read_resource tool and the operation, distinct: %+v", entries)
	}
	e, _ := findKind(entries, KindReadResource)
	if want := `{"additionalProperties":false,"properties":{"uri":{"description":`; !strings.HasPrefix(string(e.InputSchema), want) {
		t.Errorf("schema = %s", e.InputSchema)
	}
	if !strings.Contains(string(e.InputSchema), `"required":["uri"]`) {
		t.Errorf("schema does not require uri: %s", e.InputSchema)
	}
	for _, want := range []string{"- mem://r0 — r0: first ## Heading\n", "- mem://r19 — r19\n", "- … and 5 more", "- mem://{id} — By id"} {
		if !strings.Contains(e.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, e.Description)
		}
	}
	if strings.Contains(e.Description, "mem://r20") || strings.Contains(e.Description, "hidden") {
		t.Errorf("description shows too much:\n%s", e.Description)
	}
}

func TestGetPromptEntry(t *testing.T) {
	prompts := []*mcp.Prompt{
		{Name: "summarize", Description: "Summarize text.", Arguments: []*mcp.PromptArgument{{Name: "text", Required: true}, {Name: "style"}}},
		{Name: "bad\x00name"},
		{Name: "summarize"},
		{Name: "review"},
	}
	entries, warnings, err := build("p", nil, nil, nil, prompts, Filter{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(warnings, `prompt "bad\x00name"`) || !hasWarning(warnings, `prompt "summarize"`, "more than once") {
		t.Errorf("warnings = %q", warnings)
	}
	e, ok := findKind(entries, KindGetPrompt)
	if !ok {
		t.Fatal("no get_prompt entry")
	}
	var schema struct {
		Properties struct {
			Name struct {
				Enum []string `json:"enum"`
			} `json:"name"`
			Arguments struct {
				Type                 string            `json:"type"`
				AdditionalProperties map[string]string `json:"additionalProperties"`
			} `json:"arguments"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(e.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(schema.Properties.Name.Enum); got != "[summarize review]" {
		t.Errorf("enum = %s", got)
	}
	if schema.Properties.Arguments.Type != "object" || schema.Properties.Arguments.AdditionalProperties["type"] != "string" {
		t.Errorf("arguments schema = %+v", schema.Properties.Arguments)
	}
	if fmt.Sprint(schema.Required) != "[name]" {
		t.Errorf("required = %v", schema.Required)
	}
	if !strings.Contains(e.Description, "- summarize(text*, style): Summarize text.") {
		t.Errorf("description:\n%s", e.Description)
	}
}

func TestGetPromptManyHasNoEnum(t *testing.T) {
	var prompts []*mcp.Prompt
	for i := range 51 {
		prompts = append(prompts, &mcp.Prompt{Name: fmt.Sprint("p", i)})
	}
	entries, _, err := build("p", nil, nil, nil, prompts, Filter{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := findKind(entries, KindGetPrompt)
	if strings.Contains(string(e.InputSchema), "enum") {
		t.Errorf("schema has an enum of 51 names: %s", e.InputSchema)
	}
	if !strings.Contains(e.Description, "… and 31 more") {
		t.Errorf("description:\n%s", e.Description)
	}
}
