package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Formats accepted by Render (R-CAT-5).
const (
	// FormatMCP is a tools/list "tools" array.
	FormatMCP = "mcp"
	// FormatOpenAI is the "tools" array of the OpenAI Chat Completions API.
	FormatOpenAI = "openai"
	// FormatAnthropic is the "tools" array of the Anthropic Messages API.
	FormatAnthropic = "anthropic"
)

// Formats returns the formats Render accepts.
func Formats() []string { return []string{FormatMCP, FormatOpenAI, FormatAnthropic} }

// Render encodes entries as a JSON array of tool definitions in the given
// format, so an agent runtime can pass it to its model unchanged. An empty
// catalog renders as [].
func Render(entries []Entry, format string) (json.RawMessage, error) {
	if !slices.Contains(Formats(), format) {
		return nil, fmt.Errorf("unknown catalog format %q: use one of %s", format, strings.Join(Formats(), ", "))
	}
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		switch format {
		case FormatMCP:
			out = append(out, mcpTool(e))
		case FormatOpenAI:
			out = append(out, openAITool{Type: "function", Function: openAIFunction{
				Name: e.Name, Description: e.Description, Parameters: inputSchema(e),
			}})
		case FormatAnthropic:
			out = append(out, anthropicTool{Name: e.Name, Description: e.Description, InputSchema: inputSchema(e)})
		}
	}
	return marshalCompact(out)
}

type mcpToolJSON struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

func mcpTool(e Entry) mcpToolJSON {
	return mcpToolJSON{
		Name:         e.Name,
		Title:        e.Title,
		Description:  e.Description,
		InputSchema:  inputSchema(e),
		OutputSchema: e.OutputSchema,
		Annotations:  e.Annotations,
	}
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// inputSchema guards against an Entry built by hand without a schema: every
// format requires one, and null is not a schema.
func inputSchema(e Entry) json.RawMessage {
	if len(e.InputSchema) == 0 {
		return emptyObjectSchema
	}
	return e.InputSchema
}
