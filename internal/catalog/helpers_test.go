package catalog

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listsOf encodes definitions made with the SDK's structs as a server
// would list them.
func listsOf(tools []*mcp.Tool, resources []*mcp.Resource, templates []*mcp.ResourceTemplate, prompts []*mcp.Prompt) Lists {
	var l Lists
	for _, t := range tools {
		l.Tools = append(l.Tools, mustJSON(t))
	}
	for _, r := range resources {
		l.Resources = append(l.Resources, mustJSON(r))
	}
	for _, t := range templates {
		l.Templates = append(l.Templates, mustJSON(t))
	}
	for _, p := range prompts {
		l.Prompts = append(l.Prompts, mustJSON(p))
	}
	return l
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// build is Build of definitions made with the SDK's structs, returning
// the entries.
func build(server string, tools []*mcp.Tool, resources []*mcp.Resource, templates []*mcp.ResourceTemplate, prompts []*mcp.Prompt,
	f Filter, l Limits) ([]Entry, []string, error) {
	b, warnings, err := Build(server, listsOf(tools, resources, templates, prompts), f, l)
	return b.Entries, warnings, err
}
